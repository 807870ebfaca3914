#!/usr/bin/env bash
# bring up Llama-3.3-70B for the eval team (lab-gpu-07)
# GPUs 2,3 are booked by the LoRA run until Fri -> use 0,1 only
set -euo pipefail
source /opt/venvs/vllm-0.11.2/bin/activate
export CUDA_VISIBLE_DEVICES=0,1
export HF_HUB_OFFLINE=1
export VLLM_LOGGING_LEVEL=INFO
cd /data/srv/vllm
nohup vllm serve /data/models/Llama-3.3-70B-Instruct \
    --served-model-name llama-3.3-70b \
    --host 0.0.0.0 --port 8000 \
    --tensor-parallel-size 2 \
    --max-model-len 32768 --max-num-seqs 64 \
    --gpu-memory-utilization 0.92 \
    > vllm-serve.log 2>&1 &
echo "started pid $!"
