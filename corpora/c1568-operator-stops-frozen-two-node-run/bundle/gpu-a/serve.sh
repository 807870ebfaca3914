#!/bin/bash
# serve.sh - qwen3-235b on the gpu-a/gpu-b Ray cluster (ray start --head on gpu-a, ray start --address=10.20.1.11:6379 on gpu-b)
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
exec vllm serve /mnt/models/Qwen3-235B-A22B-Instruct-2507 \
  --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray \
  --max-model-len 40960 --max-num-seqs 96 --enable-prefix-caching
