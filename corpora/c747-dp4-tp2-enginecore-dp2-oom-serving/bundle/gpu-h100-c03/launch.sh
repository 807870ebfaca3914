#!/bin/bash
# gpu-h100-c03: 8x H100 80GB SXM, one container, internal DP load balancing
docker run -d --name vllm-dp4 --gpus all --ipc=host --network host \
  -v /data/hf:/root/.cache/huggingface -v /data/vllm-cache:/root/.cache/vllm \
  vllm/vllm-openai:v0.11.0 \
  --model Qwen/Qwen2.5-32B-Instruct --served-model-name qwen25-32b --port 8000 \
  --max-model-len 131072 --hf-overrides '{"rope_scaling":{"rope_type":"yarn","factor":4.0,"original_max_position_embeddings":32768}}' \
  --tensor-parallel-size 2 --data-parallel-size 4 \
  --gpu-memory-utilization 0.95 --max-num-batched-tokens 131072 --max-num-seqs 64 \
  --enable-prefix-caching
