#!/bin/bash
# /opt/k3/run-vllm.sh  (rendered by ansible role k3-serve, do not edit by hand)
set -euo pipefail
docker rm -f vllm-k3 2>/dev/null || true
docker run -d --name vllm-k3 \
  --gpus all --ipc=host --network host --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband --cap-add IPC_LOCK \
  -v /data/models:/models:ro -v /data/vllm-cache:/root/.cache \
  -e VLLM_HOST_IP=10.62.7.32 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e NCCL_IB_GID_INDEX=3 \
  -e VLLM_LOG_STATS_INTERVAL=120 -e VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=300 \
  -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 \
  /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 3 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 262144 --gpu-memory-utilization 0.92 --max-num-seqs 128 \
  --nnodes 3 --node-rank 0 --master-addr 10.62.7.32 --master-port 29501 \
  --host 0.0.0.0 --port 8000 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
