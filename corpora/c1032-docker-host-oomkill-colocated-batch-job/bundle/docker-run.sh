#!/bin/sh
docker run -d --name vllm-qwen72b --runtime nvidia --gpus all --ipc=host -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface -e HF_TOKEN \
  vllm/vllm-openai:v0.11.0 \
  Qwen/Qwen2.5-72B-Instruct --served-model-name qwen2.5-72b --tensor-parallel-size 4 \
  --max-model-len 16384 --gpu-memory-utilization 0.92 --cpu-offload-gb 20 --max-num-seqs 64
