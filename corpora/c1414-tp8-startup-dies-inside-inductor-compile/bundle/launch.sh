#!/usr/bin/env bash
# prod launcher for qwen3-235b on gpu-h100-07 (owner: inference-platform)
# 2025-05-13: bumped image 0.8.4 -> 0.8.5.post1, re-enabled torch.compile (was --enforce-eager)
set -euo pipefail
docker rm -f vllm-qwen3-235b 2>/dev/null || true
docker run -d --name vllm-qwen3-235b \
  --gpus all --ipc=host --shm-size 32g \
  -p 8000:8000 \
  -v /data/models:/models:ro \
  -v /data/cache:/root/.cache \
  -e VLLM_LOGGING_LEVEL=INFO \
  -e NCCL_DEBUG=WARN \
  vllm/vllm-openai:v0.8.5.post1 \
  --model /models/Qwen3-235B-A22B-FP8 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --max-model-len 32768 --max-num-seqs 128 --gpu-memory-utilization 0.92 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser hermes \
  --disable-log-requests
