#!/bin/bash
# /lustre/fsw/llm-inf/kimi-k3/launch_dp.sh  (runs inside the container, one task per node)
MODEL=/lustre/fsw/models/moonshotai/Kimi-K3
mkdir -p "$VLLM_CACHE_ROOT"
COMMON="--served-model-name kimi-k3 --trust-remote-code --max-model-len 262144 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --gpu-memory-utilization 0.9 --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3"
if [ "$SLURM_NODEID" = "0" ]; then
  echo "[$(date -Is)] $(hostname) SLURM_NODEID=$SLURM_NODEID SLURM_PROCID=$SLURM_PROCID role=head dp_rank=0 VLLM_CACHE_ROOT=$VLLM_CACHE_ROOT"
  exec vllm serve $MODEL $COMMON --host 0.0.0.0 --port 8000
else
  echo "[$(date -Is)] $(hostname) SLURM_NODEID=$SLURM_NODEID SLURM_PROCID=$SLURM_PROCID role=headless dp_rank=1 VLLM_CACHE_ROOT=$VLLM_CACHE_ROOT"
  exec vllm serve $MODEL $COMMON --headless --data-parallel-start-rank 1
fi
