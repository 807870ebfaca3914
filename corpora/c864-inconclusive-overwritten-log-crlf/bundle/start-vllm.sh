#!/usr/bin/env bash
# start the shared Qwen3 endpoint on gpu-ws-03 (GPUs 0,1)
set -euo pipefail
source /opt/venvs/vllm-0.24/bin/activate
export CUDA_VISIBLE_DEVICES=0,1
export HF_HUB_OFFLINE=1
export VLLM_LOGGING_LEVEL=INFO
cd /data/serving
nohup vllm serve /data/models/Qwen3-30B-A3B-Instruct-2507 \
    --served-model-name qwen3-30b \
    --tensor-parallel-size 2 \
    --max-model-len 32768 \
    --max-num-seqs 128 \
    --gpu-memory-utilization 0.88 \
    --enable-prefix-caching \
    --host 0.0.0.0 --port 8000 > /data/serving/vllm-stdout.log 2>&1 &
echo $! > /data/serving/vllm.pid
