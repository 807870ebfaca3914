#!/bin/bash
# /opt/llm/run-vllm.sh on gpu-c03 (unchanged since 2024-08-19)
docker rm -f vllm-qwen72b 2>/dev/null
docker run -d --name vllm-qwen72b \
  --gpus '"device=0,1,2,3"' --ipc=host --shm-size 16g \
  --log-driver json-file --log-opt max-size=20m --log-opt max-file=5 \
  -p 8000:8000 \
  -v /data/models:/models:ro \
  vllm/vllm-openai:v0.5.3.post1 \
  --model /models/Qwen2-72B-Instruct \
  --served-model-name qwen2-72b-instruct \
  --tensor-parallel-size 4 \
  --max-model-len 32768 \
  --gpu-memory-utilization 0.90 \
  --max-num-seqs 128 \
  --disable-log-requests
