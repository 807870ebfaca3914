#!/bin/bash
# on gpu-r1 (ray head). gpu-r3 was drained on Monday and replaced by gpu-r2 in this cluster
# ray start --head --port 6379 --dashboard-host 0.0.0.0           (gpu-r1)
# ray start --address 10.61.4.21:6379                            (gpu-r2)
export NCCL_DEBUG=WARN
export VLLM_USE_RAY_SPMD_WORKER=1 VLLM_USE_RAY_COMPILED_DAG=1
vllm serve Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --max-model-len 131072 --gpu-memory-utilization 0.9 --served-model-name qwen3-coder 2>&1 | tee vllm-serve.out
