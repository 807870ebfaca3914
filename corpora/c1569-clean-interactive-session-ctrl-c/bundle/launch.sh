#!/usr/bin/env bash
# launch.sh - local qwen3-32b endpoint for the eval team (ws-h200-02)
source ~/venvs/vllm/bin/activate
export CUDA_VISIBLE_DEVICES=0,1
export NO_COLOR=1
export HF_HOME=/data/hf
vllm serve Qwen/Qwen3-32B \
  --served-model-name qwen3-32b \
  --tensor-parallel-size 2 \
  --max-model-len 32768 \
  --gpu-memory-utilization 0.9 \
  --enable-prefix-caching \
  --reasoning-parser qwen3 \
  --shutdown-timeout 15 2>&1 | tee ~/serve/logs/vllm-$(date +%Y%m%d).log
