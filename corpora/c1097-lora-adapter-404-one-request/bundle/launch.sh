#!/usr/bin/env bash
# /srv/vllm/launch.sh on gpu-a17 (run by ops, restart=unless-stopped)
set -euo pipefail
docker rm -f vllm-lora 2>/dev/null || true
docker run -d --name vllm-lora --restart unless-stopped \
  --gpus '"device=0,1"' --ipc=host -p 8000:8000 \
  -v /srv/models:/models:ro -v /srv/adapters:/adapters:ro \
  -v /srv/vllm-cache:/root/.cache/vllm \
  -e VLLM_ALLOW_RUNTIME_LORA_UPDATING=True \
  vllm/vllm-openai:v0.10.2 \
  --model /models/Meta-Llama-3.1-8B-Instruct --served-model-name llama-3.1-8b \
  --tensor-parallel-size 2 --max-model-len 16384 --gpu-memory-utilization 0.9 \
  --enable-prefix-caching --enable-lora --max-loras 4 --max-lora-rank 64 \
  --lora-modules support-v6=/adapters/support-v6 billing-v3=/adapters/billing-v3
# collected: docker logs -t vllm-lora > docker-logs-vllm-lora.txt  (2025-10-14 09:47 UTC)
