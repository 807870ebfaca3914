#!/bin/bash
# /opt/k3/serve.sh  -- run inside k3-ray-head with: podman exec k3-ray-head /bin/bash -lc /opt/k3/serve.sh
set -euo pipefail
LOG=/var/log/k3/vllm-serve-$(date -u +%Y%m%dT%H%MZ).log
exec vllm serve moonshotai/Kimi-K3 \
  --distributed-executor-backend ray \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 \
  --trust-remote-code --served-model-name kimi-k3 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --host 0.0.0.0 --port 8000 2>&1 | tee "$LOG"
