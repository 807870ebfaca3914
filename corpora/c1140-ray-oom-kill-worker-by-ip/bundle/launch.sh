#!/bin/bash
# head: h200-ray-h01 ; worker: ray start --address=10.52.0.11:6379 --num-gpus=8 on the second node
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET NCCL_SOCKET_IFNAME=bond0 NCCL_IB_HCA=mlx5
ray start --head --port=6379 --dashboard-host=0.0.0.0 --num-gpus=8
vllm serve deepseek-ai/DeepSeek-V3.1 --served-model-name dsv31 --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray --max-model-len 65536 --enable-prefix-caching --gpu-memory-utilization 0.9 --swap-space 64 2>&1 | tee /var/log/vllm/vllm-serve-head.log
