#!/bin/bash
# b300-r2-n18: node-rank 1
set -euo pipefail
NODE_IP=10.52.8.18
docker run -d --name vllm-k3 \
  --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /models:/models:ro -v /var/cache/vllm:/root/.cache/vllm \
  -e NCCL_DEBUG=VERSION \
  -e NCCL_SOCKET_IFNAME=bond0 \
  -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e NCCL_IB_TIMEOUT=20 \
  -e VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=1800 \
  -e VLLM_LOG_STATS_INTERVAL=30 \
  -e VLLM_HOST_IP=10.52.8.18 \
  -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 \
  /models/moonshotai/Kimi-K3 \
  --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.90 \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --nnodes 2 --node-rank 1 --master-addr 10.52.8.17 --master-port 29511 \
  --headless
