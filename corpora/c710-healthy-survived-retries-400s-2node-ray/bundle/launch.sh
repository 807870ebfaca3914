#!/bin/bash
# head node gpu-l40s-a (10.52.8.11); worker gpu-l40s-b joined with ray start (see gpu-l40s-b/ray-start.log)
export NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=eth0 VLLM_HOST_IP=10.52.8.11
ray start --head --port=6379 --num-gpus=4
vllm serve /models/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b \
  --tensor-parallel-size 4 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 16384 --gpu-memory-utilization 0.93 --max-num-seqs 64 --host 0.0.0.0 2>&1 | tee vllm-serve.log
