#!/bin/bash
# gpu-a100-07: 8x A100-SXM4-80GB, shared Ray cluster (head only) used by the eval team and the serving team
export VLLM_HOST_IP=10.30.1.7
vllm serve Qwen/Qwen3-32B --served-model-name qwen3-32b --port 8100 \
  --distributed-executor-backend ray --tensor-parallel-size 8 \
  --max-model-len 40960 --gpu-memory-utilization 0.9 --enable-prefix-caching --reasoning-parser qwen3 \
  > /var/log/vllm/vllm-serve.log 2>&1
