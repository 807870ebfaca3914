#!/bin/bash
# head: h100-ray-a (10.44.0.11), worker: h100-ray-b (10.44.0.12); ray 2.49.2 started on both with default memory monitor
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0 NCCL_IB_HCA=mlx5
vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b --distributed-executor-backend ray \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --max-model-len 131072 \
  --cpu-offload-gb 40 --gpu-memory-utilization 0.92 --enable-prefix-caching 2>&1 | tee vllm-serve.log
