#!/bin/bash
# infer-l40s-03: bring up llama-3.1-70b for the support-bot pilot
# flags taken over from prod values (helm/llama70b-h100/values.yaml), TP reduced to the 2 L40S of this box
docker rm -f vllm-llama70b 2>/dev/null
docker run -d --name vllm-llama70b \
  --gpus '"device=0,1"' --ipc=host -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface \
  -e HF_HUB_OFFLINE=1 -e VLLM_WORKER_MULTIPROC_METHOD=spawn \
  vllm/vllm-openai:v0.6.4.post1 \
  --model neuralmagic/Meta-Llama-3.1-70B-Instruct-FP8 \
  --served-model-name llama-3.1-70b \
  --tensor-parallel-size 2 \
  --max-model-len 131072 \
  --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser llama3_json \
  --disable-log-requests
