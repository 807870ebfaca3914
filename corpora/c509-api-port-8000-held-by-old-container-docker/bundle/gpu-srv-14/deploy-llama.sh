#!/bin/bash
# blue/green on the same host: new version on GPUs 4-7, then switch (host networking, port 8000 is what the LB health-checks)
set -x
docker stop vllm-llama 2>/dev/null || true
docker rm vllm-llama 2>/dev/null || true
docker run -d --name vllm-llama --restart unless-stopped --network host --ipc host \
  --gpus '"device=4,5,6,7"' -v /models:/models \
  vllm/vllm-openai:v0.6.3.post1 \
  --host 0.0.0.0 --port 8000 --model /models/Meta-Llama-3.1-70B-Instruct --served-model-name llama-3.1-70b \
  --tensor-parallel-size 4 --max-model-len 32768 --gpu-memory-utilization 0.92 --enable-prefix-caching --disable-log-requests
# TODO: old instance was renamed to vllm-llama-old during the v0.5.5 hotfix (INC-3920) and is not stopped by this script
