#!/usr/bin/env bash
# host: gpu-b300-07 (k3-prod pool), started by on-call 2026-10-14 02:58 UTC after the driver-patch reboot
set -euo pipefail
docker run -d --name k3-serve \
  --gpus all --ipc=host --network host \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /mnt/models/Kimi-K3:/models/Kimi-K3:ro \
  -v /var/cache/vllm:/root/.cache/vllm \
  -e VLLM_K3_RECIPE_REV=2026.09 \
  -e NCCL_DEBUG=WARN \
  vllm/vllm-openai:kimi-k3 \
  --model /models/Kimi-K3 \
  --served-model-name moonshotai/Kimi-K3 \
  --trust-remote-code \
  --tensor-parallel-size 8 \
  --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 1048576 \
  --max-num-batched-tokens 16384 \
  --max-num-seqs 128 \
  --gpu-memory-utilization 0.95 \
  --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 \
  --reasoning-parser kimi_k3 \
  --host 0.0.0.0 --port 8000
# note: no --restart policy on purpose (pool manager restarts hosts, not containers)
