#!/bin/bash
# k3-blue on gb3-inf-a07 (10.52.8.17) -- deployed 2026-10-09 09:12 UTC, profile tpot-v1
set -euo pipefail
docker rm -f k3-blue 2>/dev/null || true
docker run -d --name k3-blue --restart unless-stopped \
  --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /mnt/models:/models:ro -v /var/cache/vllm:/root/.cache/vllm \
  -e NCCL_DEBUG=WARN -e VLLM_LOGGING_LEVEL=INFO \
  vllm/vllm-openai:kimi-k3 \
  --model /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 262144 --gpu-memory-utilization 0.92 --max-num-seqs 96 \
  --enable-prefix-caching \
  --speculative-config '{"method":"mtp","num_speculative_tokens":3}' \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --port 8000
