#!/bin/bash
# scripts/serve-generic.sh -- shared launcher used by the platform team for ray-backed deployments
# usage: MODEL=... PP=... TP=... MAXLEN=... ./serve-generic.sh
set -euo pipefail
: "${GPU_UTIL:=0.8}"          # conservative default for shared clusters
: "${MAX_BATCHED:=32768}"     # throughput-oriented prefill chunk
exec vllm serve "$MODEL" --trust-remote-code --served-model-name "$SERVED_NAME" \
  --distributed-executor-backend ray --pipeline-parallel-size "$PP" --tensor-parallel-size "$TP" \
  --max-model-len "$MAXLEN" --gpu-memory-utilization "$GPU_UTIL" --max-num-batched-tokens "$MAX_BATCHED" \
  --max-num-seqs 256 ${EXTRA_ARGS:-}

# invocation recorded in the change ticket (CHG-10877, 2026-12-09 10:04 UTC):
# MODEL=moonshotai/Kimi-K3 SERVED_NAME=kimi-k3 PP=2 TP=8 MAXLEN=1048576 \
#   EXTRA_ARGS="--enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching" ./serve-generic.sh
