#!/bin/bash
# run on the Ray head after `ray start --head --port=6379` here and `ray start --address=10.18.6.21:6379` on the second node
source /opt/vllm-venv/bin/activate
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
vllm serve /data/models/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 131072 --gpu-memory-utilization 0.90 --max-num-seqs 128 --enable-prefix-caching \
  2>&1 | tee -a /var/log/vllm/vllm-serve.log
