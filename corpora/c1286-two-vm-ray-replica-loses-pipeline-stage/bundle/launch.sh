#!/bin/bash
# llm-a3-head (a3-highgpu-8g, on-demand, Ray head) + llm-a3-spot-2 (a3-highgpu-8g, SPOT, ray-worker.service)
# pipeline stage 0 (ranks 0-7) on the head, stage 1 (ranks 8-15) on the spot VM
export NCCL_SOCKET_IFNAME=ens8
export GLOO_SOCKET_IFNAME=ens8
export NCCL_DEBUG=WARN
vllm serve /mnt/disks/models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 32768 --gpu-memory-utilization 0.92 --enable-prefix-caching \
  --host 0.0.0.0 --port 8000 2>&1 | tee -a /var/log/vllm/vllm-serve.log
