#!/bin/bash
# launch-k3.sh: one task per GB300 tray (4 GPUs); TP=8 across the two trays over MNNVL
set -x
MASTER=10.72.7.3
export HF_HUB_OFFLINE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_MNNVL_ENABLE=1 GLOO_SOCKET_IFNAME=enP5p9s0 NCCL_SOCKET_IFNAME=enP5p9s0
ARGS="moonshotai/Kimi-K3 --served-model-name kimi-k3 --tensor-parallel-size 8 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576 --trust-remote-code \
  --nnodes 2 --node-rank $SLURM_NODEID --master-addr $MASTER --master-port 29511"
echo "+ launch-k3.sh node_rank=$SLURM_NODEID master=$MASTER host=$(hostname -s)"
if [ "$SLURM_NODEID" = 0 ]; then exec vllm serve $ARGS --host 0.0.0.0 --port 8000; else exec vllm serve $ARGS --headless; fi
