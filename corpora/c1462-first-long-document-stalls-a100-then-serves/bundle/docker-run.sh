#!/bin/bash
# started by hand on gpu-a100-r2-07 (4x A100-SXM4-80GB), 2025-11-18 ~13:02 UTC
docker run -d --name qwen3next-a100 --gpus all --ipc=host -p 8000:8000 \
  -v /srv/hf-cache:/root/.cache/huggingface \
  --health-cmd 'curl -fsS http://127.0.0.1:8000/health || exit 1' --health-interval 30s --health-retries 5 \
  vllm/vllm-openai:v0.11.0 \
  --model Qwen/Qwen3-Next-80B-A3B-Instruct --served-model-name qwen3-next-80b \
  --tensor-parallel-size 4 --max-model-len 65536 --gpu-memory-utilization 0.9

# logs for this bundle:
#   docker logs -t qwen3next-a100 > vllm-container.log 2>&1     (taken 13:41 UTC)
