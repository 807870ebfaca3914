#!/usr/bin/env bash
# serve/launch.sh - run on gpu-h100-a07 (Ray head); gpu-h100-a08 joined with: ray start --address=10.40.7.17:6379
# image: vllm/vllm-openai:v0.9.2 (both nodes), NCCL from the wheel (nvidia-nccl-cu12 2.26.2)
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --distributed-executor-backend ray \
    --max-model-len 32768 --served-model-name llama-405b \
    --disable-log-requests --disable-uvicorn-access-log \
    --host 0.0.0.0 --port 8000 2>&1 | tee /var/log/vllm/vllm-serve.log
