#!/usr/bin/env bash
# /opt/llm/bin/serve-qwen3-235b.sh  -- started by hand in tmux (session "llm"), owner svc-llm
# history:
#   2025-10-14  0.10.1.1 -> 0.11.0 (venv-vllm011), max-num-seqs 256 -> 512 for the batch-eval team
#   2025-10-20  gpu-memory-utilization 0.92 -> 0.98 ("need more KV for 64k context", see #llm-ops)
set -x
source /opt/llm/venv-vllm011/bin/activate
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export HF_HUB_OFFLINE=1
export VLLM_CACHE_ROOT=/home/svc-llm/.cache/vllm
LOG=/var/log/llm/serve-qwen3-235b.$(date -u +%Y%m%d-%H%M).log
{
exec vllm serve /data/models/Qwen3-235B-A22B-Instruct-2507 \
  --served-model-name qwen3-235b \
  --tensor-parallel-size 8 \
  --max-model-len 65536 \
  --max-num-seqs 512 \
  --max-num-batched-tokens 16384 \
  --gpu-memory-utilization 0.98 \
  --enable-prefix-caching \
  --port 8080
} > "$LOG" 2>&1
echo "vllm exited with status $? at $(date -u +%FT%TZ)" >> "$LOG"
