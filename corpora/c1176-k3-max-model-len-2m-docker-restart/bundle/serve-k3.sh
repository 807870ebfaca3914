#!/usr/bin/env bash
# Kimi K3 single node (8x B300, NVLink) -- recipe flags, see runbook K3-serving v3
set -euo pipefail

MODEL_DIR=${MODEL_DIR:-/mnt/nvme0/models/Kimi-K3}
MAX_LEN=${MAX_LEN:-1048576}          # recipe maximum: 1,048,576
GPU_UTIL=${GPU_UTIL:-0.92}
IMAGE=${IMAGE:-vllm/vllm-openai:kimi-k3}

docker rm -f kimi-k3 2>/dev/null || true
docker run -d --name kimi-k3 --restart unless-stopped \
  --runtime nvidia --gpus all --ipc=host --network host \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v "$MODEL_DIR":/models/Kimi-K3:ro -e VLLM_K3_CTX_TARGET -e VLLM_API_KEY \
  "$IMAGE" \
  --model /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len "$MAX_LEN" --gpu-memory-utilization "$GPU_UTIL" --kv-cache-dtype fp8 \
  --enable-prefix-caching --max-num-seqs 32 \
  --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2
