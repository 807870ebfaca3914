#!/bin/bash
set -euo pipefail
export VLLM_MOONCAKE_BOOTSTRAP_PORT=8998 MC_TE_METRIC=0 UCX_TLS=rc,cuda_copy
IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1)
if [ "$SLURM_PROCID" = "0" ]; then ROLE=prefill; PORT=8100; KVROLE=kv_producer; else ROLE=decode; PORT=8200; KVROLE=kv_consumer; fi
echo "[launch] host=$(hostname -s) role=$ROLE ip=$IP port=$PORT job=$SLURM_JOB_ID task=$SLURM_PROCID"
echo "[launch] CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES MC_TE_METRIC=$MC_TE_METRIC VLLM_MOONCAKE_BOOTSTRAP_PORT=$VLLM_MOONCAKE_BOOTSTRAP_PORT UCX_TLS=$UCX_TLS"
exec vllm serve /lustre/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --host 0.0.0.0 --port $PORT \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 262144 --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --kv-transfer-config "{\"kv_connector\":\"MooncakeConnector\",\"kv_role\":\"$KVROLE\",\"kv_load_failure_policy\":\"fail\",\"kv_connector_extra_config\":{\"mooncake_protocol\":\"rdma\"}}"
