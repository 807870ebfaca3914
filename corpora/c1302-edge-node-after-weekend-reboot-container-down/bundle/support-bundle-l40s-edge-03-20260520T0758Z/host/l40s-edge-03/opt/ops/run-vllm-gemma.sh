#!/bin/bash
# (re)create the gemma endpoint -- ops/edge runbook E-7
docker rm -f vllm-gemma 2>/dev/null
exec docker run -d --name vllm-gemma --restart unless-stopped \
  --gpus all --ipc host -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface \
  -e HF_TOKEN_FILE=/root/.cache/huggingface/token \
  vllm/vllm-openai:v0.21.1 \
  --model google/gemma-3-27b-it --served-model-name gemma-3-27b \
  --tensor-parallel-size 2 --max-model-len 32768 --gpu-memory-utilization 0.92
