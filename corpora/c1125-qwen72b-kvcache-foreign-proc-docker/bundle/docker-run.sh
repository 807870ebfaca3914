#!/bin/bash
# qwen72b service, moved to h100-svc-03 on 2025-05-27 (was on h100-svc-01)
# util raised 0.90 -> 0.95 after the first failed start ("Try increasing gpu_memory_utilization")
docker rm -f qwen72b 2>/dev/null
docker run -d --name qwen72b --restart=no \
  --gpus all --ipc=host -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface \
  -v /data/vllm-cache:/root/.cache/vllm \
  -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:v0.8.5.post1 \
  --model Qwen/Qwen2.5-72B-Instruct \
  --served-model-name qwen2.5-72b-instruct \
  --tensor-parallel-size 4 \
  --max-model-len 32768 \
  --gpu-memory-utilization 0.95 \
  --swap-space 16 \
  --enable-prefix-caching \
  --disable-log-requests
