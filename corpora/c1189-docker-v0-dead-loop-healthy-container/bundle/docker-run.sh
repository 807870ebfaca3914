#!/bin/bash
# /srv/llm/run-llama3.sh on inf-a10-02 (started 2024-08-14 09:11 UTC after the host patch reboot)
docker run -d --name llama3-8b --gpus '"device=0"' --ipc=host -p 8000:8000 \
  -v /srv/models:/models:ro \
  --health-cmd 'curl -fsS http://127.0.0.1:8000/v1/models || exit 1' --health-interval 60s --health-retries 3 \
  --restart unless-stopped \
  vllm/vllm-openai:v0.5.3.post1 \
  --model /models/Meta-Llama-3-8B-Instruct --served-model-name llama3-8b \
  --max-model-len 8192 --max-num-seqs 64 --gpu-memory-utilization 0.95 --disable-log-requests
