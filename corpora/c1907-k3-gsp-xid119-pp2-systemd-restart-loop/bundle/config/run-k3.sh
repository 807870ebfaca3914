#!/bin/bash
# /opt/kimi/bin/run-k3.sh
set -euo pipefail
: "${NODE_RANK:?NODE_RANK not set}"
ARGS=(/srv/models/Kimi-K3
  --served-model-name kimi-k3 --trust-remote-code
  --tensor-parallel-size 8 --pipeline-parallel-size 2
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided
  --max-model-len 524288 --max-num-seqs 64 --gpu-memory-utilization 0.9
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser kimi_k3
  --nnodes 2 --node-rank "${NODE_RANK}" --master-addr 10.52.7.13 --master-port 29511)
if [ "${NODE_RANK}" -ne 0 ]; then
  ARGS+=(--headless)
fi
exec /opt/kimi/venv/bin/vllm serve "${ARGS[@]}"
