#!/usr/bin/env bash
# /srv/llm/run-qwen3-14b.sh  -- started by hand by j.okafor, 2025-10-07 13:02 UTC
docker rm -f vllm-qwen3 2>/dev/null
docker run -d --name vllm-qwen3 \
  --gpus '"device=1"' --ipc=host -p 8010:8000 \
  -v /srv/hf-cache:/root/.cache/huggingface \
  -e HF_TOKEN_PATH=/root/.cache/huggingface/token \
  -e VLLM_LOGGING_LEVEL=DEBUG \
  ghcr.io/acme-ml/vllm-slim:0.10.2-cu128-sm89 \
  --model unsloth/Qwen3-14B-unsloth-bnb-4bit \
  --served-model-name qwen3-14b \
  --max-model-len 16384 --gpu-memory-utilization 0.88 --enable-prefix-caching
sleep 60
docker logs -t vllm-qwen3 > /srv/llm/support/docker-logs-t_vllm-qwen3.txt 2>&1
