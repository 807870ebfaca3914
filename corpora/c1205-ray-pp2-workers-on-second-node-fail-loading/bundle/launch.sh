#!/bin/bash
# run on gpu-h100-a31 after both nodes joined the Ray cluster (ray-worker.service on a32)
source /opt/vllm/.venv/bin/activate
export HF_HOME=/raid/hf NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b --port 8080 \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --max-model-len 65536 --gpu-memory-utilization 0.9 2>&1 | tee /var/log/vllm/vllm-serve.log
