#!/bin/bash
# qwen3-235b prod endpoint, started from tmux on sjc-gpu-116 (ray head) -- worker joined with:
#   ray start --address=10.44.3.16:6379 --num-gpus=8
source /opt/conda/bin/activate vllm
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_DEBUG=WARN
export RAY_DEDUP_LOGS=0
export VLLM_LOGGING_LEVEL=INFO
vllm serve /mnt/models/Qwen3-235B-A22B-Instruct-2507 \
  --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray \
  --max-model-len 65536 --max-num-seqs 128 \
  --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --host 0.0.0.0 --port 8000 2>&1 | tee -a /var/log/vllm/serve.log
