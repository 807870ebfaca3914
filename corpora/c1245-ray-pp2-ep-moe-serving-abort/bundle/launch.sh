#!/usr/bin/env bash
# on gpu-b7-11 (head):   ray start --head --port=6379 --num-gpus=8 --node-ip-address=10.52.3.11
# on gpu-b7-14 (worker): ray start --address=10.52.3.11:6379 --num-gpus=8 --node-ip-address=10.52.3.14 --block
# then on the head, inside the same image (vllm/vllm-openai:v0.24.0, --network host --ipc host):
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export VLLM_LOG_STATS_INTERVAL=60
vllm serve /models/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --max-model-len 65536 --gpu-memory-utilization 0.90 \
  --enable-prefix-caching 2>&1 | tee serve.log
