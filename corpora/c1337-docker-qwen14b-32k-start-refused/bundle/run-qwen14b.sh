#!/usr/bin/env bash
# ws-infer-02: chat model next to the bge-m3 embedder on the same A6000 (GPU 0)
# 2025-03-10 jkr: --gpu-memory-utilization 0.90 -> 0.70 so tei-bge-m3 can share the card
docker rm -f qwen14b 2>/dev/null
docker run -d --name qwen14b \
  --gpus '"device=0"' --ipc=host \
  -p 8001:8000 \
  -v /srv/models:/models:ro \
  -e VLLM_USE_V1=0 \
  vllm/vllm-openai:v0.7.3 \
  --model /models/Qwen2.5-14B-Instruct \
  --served-model-name qwen14b \
  --max-model-len 32768 \
  --gpu-memory-utilization 0.70 \
  --enable-prefix-caching \
  --disable-log-requests
