#!/bin/bash
# /opt/llm/bin/launch.sh  (copied from the h100 fleet playbook, host b200-07)
docker rm -f qwen3-235b 2>/dev/null
docker run -d --name qwen3-235b --gpus all --ipc=host --network host \
  --env-file /opt/llm/etc/vllm.env \
  -v /data/hf:/root/.cache/huggingface \
  -v /usr/local/cuda-12.4:/usr/local/cuda-12.4:ro \
  vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --enable-expert-parallel --max-model-len 131072 \
  --gpu-memory-utilization 0.9 --enable-prefix-caching
