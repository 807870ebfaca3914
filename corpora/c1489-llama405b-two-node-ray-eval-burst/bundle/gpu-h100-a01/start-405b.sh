#!/usr/bin/env bash
# /srv/llm/start-405b.sh  -- run on gpu-h100-a01 (ray head). gpu-h100-a02 joined with:
#   ray start --address=10.42.8.11:6379 --num-gpus=8 --node-ip-address=10.42.8.12
# both nodes: image vllm/vllm-openai:v0.10.1.1 (same digest), host network, /dev/infiniband mapped, --ipc=host
export VLLM_HOST_IP=10.42.8.11
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export RAY_DEDUP_LOGS=0
nohup vllm serve /models/Llama-3.1-405B-Instruct-FP8 \
    --served-model-name llama-3.1-405b \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --distributed-executor-backend ray \
    --max-model-len 131072 --max-num-batched-tokens 32768 --max-num-seqs 64 \
    --gpu-memory-utilization 0.92 --enable-prefix-caching \
    --disable-uvicorn-access-log \
    --host 0.0.0.0 --port 8000 > /srv/llm/logs/vllm-serve.log 2>&1 &
