#!/usr/bin/env bash
# /opt/llm/run-vllm70b.sh  (host h100-b12)
# 2025-07-02 pw: bumped util 0.90 -> 0.98 and max-num-seqs 256 -> 512 for the eval sweep (more KV, more concurrency)
# 2025-06-05 pw: NCCL_CUMEM_ENABLE=0 (workaround from the hang we saw with the old driver, INC-7716)
set -euo pipefail
docker rm -f vllm70b 2>/dev/null || true
docker run -d --name vllm70b \
  --gpus '"device=0,1,2,3"' --ipc=host --shm-size 16g -p 8000:8000 \
  -e NCCL_CUMEM_ENABLE=0 \
  -e VLLM_WORKER_MULTIPROC_METHOD=spawn \
  -v /data/models:/models:ro \
  -v /data/vllm-cache:/root/.cache/vllm \
  vllm/vllm-openai:v0.9.1 \
  --model /models/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b \
  --tensor-parallel-size 4 --max-model-len 32768 \
  --gpu-memory-utilization 0.98 --max-num-seqs 512 --max-num-batched-tokens 16384 \
  --enable-prefix-caching --disable-log-requests
sleep 2
docker logs -t -f vllm70b > /var/log/llm/vllm70b.docker.log 2>&1 &
