#!/usr/bin/env bash
# /opt/llm/kimi-k3/launch.sh on hgx-b3-r07n2 (perf-eval lab), started 2026-11-18 13:02 UTC
# NOTE: container restarted this morning to pick up --enable-log-requests for the load test
set -euo pipefail
docker rm -f vllm-kimi-k3 2>/dev/null || true
docker run -d --name vllm-kimi-k3 \
  --gpus all --ipc=host --network host --shm-size 32g --ulimit memlock=-1 \
  -v /data/hf:/root/.cache/huggingface \
  -e HF_HUB_ENABLE_HF_TRANSFER=1 \
  -e VLLM_LOG_STATS_INTERVAL=10 \
  --log-opt max-size=200m --log-opt max-file=3 \
  vllm/vllm-openai:kimi-k3 \
  moonshotai/Kimi-K3 \
  --served-model-name kimi-k3 \
  --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching \
  --max-model-len 262144 \
  --gpu-memory-utilization 0.92 \
  --max-num-seqs 64 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --enable-log-requests
