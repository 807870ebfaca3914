#!/bin/bash
# on gpu-head-01 (ray head started by systemd: ray start --head --port=6379 --dashboard-host=0.0.0.0)
# gpu-wrk-02 joined with: ray start --address=10.20.0.11:6379
# cpu-etl-05 (data team, no GPU) joined with: ray start --address=10.20.0.11:6379 --num-gpus=0
source /opt/conda/bin/activate serve
export NCCL_SOCKET_IFNAME=ens5
export GLOO_SOCKET_IFNAME=ens5
nohup vllm serve /mnt/models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 16384 --max-num-seqs 128 --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --host 0.0.0.0 --port 8000 > /var/log/vllm/vllm-serve.log 2>&1 &
