#!/usr/bin/env bash
# K3 reservation: gpu-h200-a3 (node 0, API) + gpu-h200-a4 (node 1, headless). Run on both nodes.
set -euo pipefail
NODE_RANK=${1:?usage: launch-k3.sh <node-rank>}
HEAD_IP=10.61.4.23
EXTRA=()
[[ "$NODE_RANK" != 0 ]] && EXTRA+=(--headless)
docker rm -f vllm-k3 2>/dev/null || true
docker run -d --name vllm-k3 --gpus all --ipc=host --network=host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /data/models/Kimi-K3:/models/Kimi-K3:ro -v /data/cache/vllm:/root/.cache/vllm \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=eth0 -e GLOO_SOCKET_IFNAME=eth0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_CUMEM_ENABLE=0 -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 \
  /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --host 0.0.0.0 --port 8000 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 1048576 --gpu-memory-utilization 0.92 \
  --enable-prefix-caching \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --nnodes 2 --node-rank "$NODE_RANK" --master-addr "$HEAD_IP" --master-port 29600 "${EXTRA[@]}"
