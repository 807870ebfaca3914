#!/bin/bash
# k3-green on gb3-inf-a08 (10.52.8.18) -- redeployed 2026-10-14 13:30 UTC with profile tpot-v2 (ticket PLAT-2291)
set -euo pipefail
docker rm -f k3-green 2>/dev/null || true
docker run -d --name k3-green --restart on-failure:3 \
  --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /mnt/models:/models:ro -v /var/cache/vllm:/root/.cache/vllm \
  -e NCCL_DEBUG=WARN -e VLLM_LOGGING_LEVEL=INFO \
  vllm/vllm-openai:kimi-k3 \
  --model /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 262144 --gpu-memory-utilization 0.92 --max-num-seqs 96 \
  --enable-prefix-caching \
  --speculative-config '{"method":"mtp","num_speculative_tokens":5}' \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --port 8000
