#!/bin/bash
# head: gpu-r2-n16 (10.42.8.21); worker: gpu-r2-n17 (10.42.8.22); 8x L40S 48GB each
# on the worker:  ray start --address=10.42.8.21:6379 --num-gpus=8 --block
ray start --head --port=6379 --num-gpus=8 --dashboard-host=0.0.0.0
export VLLM_HOST_IP=10.42.8.21 NCCL_SOCKET_IFNAME=bond0 NCCL_DEBUG=WARN
vllm serve deepseek-ai/DeepSeek-V3-0324 --trust-remote-code --served-model-name dsv3 \
  --distributed-executor-backend ray --pipeline-parallel-size 2 --tensor-parallel-size 8 \
  --max-model-len 32768 --gpu-memory-utilization 0.92 2>&1 | tee vllm-serve.log
