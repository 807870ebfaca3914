#!/usr/bin/env bash
# /opt/vllm/bin/launch-llama70b.sh  (runs as svc-vllm in tmux session "llama70b" on gpu-h100-14)
set -euo pipefail
source /opt/vllm/venv/bin/activate
export CUDA_VISIBLE_DEVICES=0,1
export HF_HOME=/data/hf
LOG=/var/log/vllm/gpu-h100-14.vllm-serve.log
nvidia-smi > /var/log/vllm/gpu-h100-14.nvidia-smi.txt
# bumped from 0.90 / 256 seqs on 2025-10-30 to get more KV cache for the batch eval (ticket LLM-771)
vllm serve RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic \
  --served-model-name llama-3.3-70b --host 0.0.0.0 --port 8100 \
  --tensor-parallel-size 2 --max-model-len 32768 \
  --gpu-memory-utilization 0.95 --max-num-seqs 512 --enable-prefix-caching \
  2>&1 | tee "$LOG"
