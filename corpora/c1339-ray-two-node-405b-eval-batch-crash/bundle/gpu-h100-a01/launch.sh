#!/usr/bin/env bash
# llama405b on two H100 nodes, Ray backend (runbook LLM-RB-12)
#   gpu-h100-a01  10.40.8.21  (Ray head, API server)
#   gpu-h100-a02  10.40.8.22  (Ray worker)
# on a02:  ray start --address=10.40.8.21:6379 --num-gpus=8 --block
# on a01:
ray start --head --port=6379 --dashboard-host=0.0.0.0 --num-gpus=8
export VLLM_USE_V1=1
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export GLOO_SOCKET_IFNAME=bond0
vllm serve /mnt/models/Meta-Llama-3.1-405B-Instruct-FP8 \
  --served-model-name llama405b \
  --distributed-executor-backend ray \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --max-model-len 65536 \
  --max-num-seqs 64 \
  --gpu-memory-utilization 0.94 \
  --max-logprobs 20 \
  2>&1 | tee /var/log/vllm/llama405b-$(date -u +%Y%m%d-%H%M).log
