#!/bin/bash
# RB-vllm-405b v3 -- production launch of llama-405b on the h100-sxm pool (reviewed 2025-11-18)
# serves on the default port 8000 behind the envoy pool "llm-405b"
set -euo pipefail
exec docker run --rm --name vllm-405b --gpus all --ipc=host --network host \
  -v /models:/models:ro \
  vllm/vllm-openai:v0.11.0 \
  --model /models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
  --tensor-parallel-size 8 --max-model-len 131072 --gpu-memory-utilization 0.85 \
  --max-num-seqs 64 --enable-prefix-caching
