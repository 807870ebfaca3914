#!/usr/bin/env bash
# started by hand on the head tray (nvl72-r2-t05) after the ray units are up
set -uo pipefail
log() { echo "[k3-serve $(date -u +%Y-%m-%dT%H:%M:%SZ)] $*"; }
log "waiting 90s for ray workers to register"
sleep 90
log "launching: docker exec k3-ray vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 16 --distributed-executor-backend ray --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 --host 0.0.0.0 --port 8000"
docker exec k3-ray vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 16 --distributed-executor-backend ray --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 --host 0.0.0.0 --port 8000
rc=$?
log "vllm serve exited with status $rc"
exit $rc
