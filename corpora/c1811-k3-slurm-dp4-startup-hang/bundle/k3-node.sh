#!/bin/bash
# one task per node; SLURM_NODEID doubles as the data-parallel start rank
set -eo pipefail
mkdir -p "$TRITON_CACHE_DIR"
echo "[k3-node] SLURM_NODEID=$SLURM_NODEID SLURM_PROCID=$SLURM_PROCID SLURM_LOCALID=$SLURM_LOCALID dp_start_rank=$SLURM_NODEID gpus=$CUDA_VISIBLE_DEVICES"
echo "[k3-node] VLLM_CACHE_ROOT=$VLLM_CACHE_ROOT TRITON_CACHE_DIR=$TRITON_CACHE_DIR"
ARGS="/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 4 --data-parallel-size 4 --data-parallel-size-local 1 --data-parallel-address 10.150.7.5 --data-parallel-rpc-port 13345 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 524288 --gpu-memory-utilization 0.90 --max-num-seqs 192"
if [ "$SLURM_NODEID" = "0" ]; then
  echo "[k3-node] role=frontend+DP0 cmd: vllm serve $ARGS --port 8000"
  exec vllm serve $ARGS --port 8000
else
  echo "[k3-node] role=headless cmd: vllm serve $ARGS --headless --data-parallel-start-rank $SLURM_NODEID"
  exec vllm serve $ARGS --headless --data-parallel-start-rank "$SLURM_NODEID"
fi
