#!/bin/bash
# run on h200-p4-07 after `ray start --head` there and `ray start --address=10.44.12.7:6379` on h200-p4-08
source /opt/vllm-venv/bin/activate
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_DEBUG=WARN
vllm serve /mnt/models/Qwen3-235B-A22B-Instruct-2507-FP8 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 65536 --max-num-seqs 128 --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --disable-uvicorn-access-log --host 0.0.0.0 --port 8000 2>&1 | tee /var/log/vllm/vllm-serve.log
