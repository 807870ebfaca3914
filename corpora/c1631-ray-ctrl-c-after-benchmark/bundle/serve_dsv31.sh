#!/usr/bin/env bash
# run from tmux pane "serve" on h100-sxm-a07 (Ray head). Ray was started beforehand:
#   a07: ray start --head --port=6379 --node-ip-address=10.60.2.17 --num-gpus=8 --dashboard-host=0.0.0.0
#   a08: ray start --address=10.60.2.17:6379 --node-ip-address=10.60.2.18 --num-gpus=8
source /home/ops/venvs/vllm-0.11/bin/activate
export HF_HOME=/mnt/nvme0/hf
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export VLLM_HOST_IP=10.60.2.17
# NCCL_DEBUG intentionally unset for the benchmark run

vllm serve deepseek-ai/DeepSeek-V3.1 \
  --served-model-name dsv31 \
  --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray \
  --max-model-len 65536 --max-num-seqs 128 \
  --gpu-memory-utilization 0.92 \
  --disable-uvicorn-access-log \
  --host 0.0.0.0 --port 8000
