#!/bin/bash
# hgx-h200-b07 -- nightly synth-data + internal API, started by ops 2026-07-07 21:02
docker run -d --name qwen3-235b --gpus all --ipc=host --shm-size 64g \
  -p 8000:8000 \
  -v /raid/hf:/root/.cache/huggingface \
  -v /raid/vllm-cache:/root/.cache/vllm \
  -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:v0.23.0 \
  --model Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --max-model-len 131072 --gpu-memory-utilization 0.90 --max-num-seqs 256 \
  --enable-prefix-caching --disable-uvicorn-access-log
