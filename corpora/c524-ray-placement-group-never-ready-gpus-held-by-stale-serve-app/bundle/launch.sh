#!/usr/bin/env bash
# gemma2-27b for the eval team, on the shared 2x4 L40S ray cluster (head l40s-a01, worker l40s-a02)
# ray 2.40.0 started by systemd on both boxes (ray-head.service / ray-worker.service)
source /opt/venvs/vllm073/bin/activate
export VLLM_HOST_IP=10.31.2.41 NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
nohup vllm serve google/gemma-2-27b-it --served-model-name gemma2-27b \
  --tensor-parallel-size 4 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 8192 --gpu-memory-utilization 0.92 > /srv/logs/vllm-serve-gemma2.log 2>&1 &
