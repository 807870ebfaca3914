#!/bin/bash
# same script on l-h100-21/22/23; replica uses GPUs 0,1 of each host
docker run -d --name vllm-llama70b --gpus '"device=0,1"' --ipc=host -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:v0.10.1.1 \
  --model RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic --served-model-name llama-3.3-70b \
  --tensor-parallel-size 2 --max-model-len 32768 --gpu-memory-utilization 0.92 \
  --max-num-seqs 128 --enable-prefix-caching
