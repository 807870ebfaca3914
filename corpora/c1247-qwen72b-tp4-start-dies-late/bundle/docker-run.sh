#!/bin/bash
# perf-tuned launch (ticket PERF-431): raise batch ceiling for the eval burst traffic
# previous values: --gpu-memory-utilization 0.90 --max-num-seqs 256 (default capture sizes)
docker run -d --name vllm-qwen72b \
  --gpus '"device=4,5,6,7"' \
  --ipc=host \
  -p 8000:8000 \
  -v /data/hf-cache:/root/.cache/huggingface \
  -v /data/vllm-cache:/root/.cache/vllm \
  -e HF_TOKEN \
  vllm/vllm-openai:v0.15.1 \
  Qwen/Qwen2.5-72B-Instruct \
  --served-model-name qwen2.5-72b \
  --tensor-parallel-size 4 \
  --max-model-len 32768 \
  --gpu-memory-utilization 0.98 \
  --max-num-seqs 1024 \
  --max-num-batched-tokens 16384 \
  --compilation-config '{"cudagraph_mode": "FULL_AND_PIECEWISE", "max_cudagraph_capture_size": 1024}'
