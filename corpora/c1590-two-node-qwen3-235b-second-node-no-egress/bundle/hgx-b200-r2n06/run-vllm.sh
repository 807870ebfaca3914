#!/usr/bin/env bash
# qwen3-235b multi-node serve, node_rank 1
set -euo pipefail
docker rm -f vllm-qwen3 2>/dev/null || true
docker run -d --name vllm-qwen3 --gpus all --ipc=host --network host --shm-size 32g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /raid/hf-cache:/root/.cache/huggingface \
  -e HF_TOKEN="$(cat /etc/llm/hf_token)" \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_10,mlx5_11 \
  -e VLLM_HOST_IP=10.60.2.16 \
  vllm/vllm-openai:v0.21.0 \
  Qwen/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --nnodes 2 --node-rank 1 --master-addr 10.60.2.15 --master-port 29511 \
  --max-model-len 131072 --gpu-memory-utilization 0.9 --enable-prefix-caching --headless
