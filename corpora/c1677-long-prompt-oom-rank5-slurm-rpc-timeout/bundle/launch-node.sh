#!/bin/bash
# /lustre/svc/k3/launch-node.sh  -- one task per node (GB300 NVL72 compute tray, 4 GPUs)
export VLLM_CACHE_ROOT=/lustre/cache/vllm
export HF_HUB_OFFLINE=1
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export NCCL_MNNVL_ENABLE=1
export NCCL_SOCKET_IFNAME=enP6p3s0f0np0
export GLOO_SOCKET_IFNAME=enP6p3s0f0np0
COMMON="--trust-remote-code --served-model-name kimi-k3 --tensor-parallel-size 8 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --nnodes 2 --master-addr ${HEAD_IP} --master-port ${MASTER_PORT} \
  --max-model-len 1048576 --max-num-seqs 128 --gpu-memory-utilization 0.95 \
  --max-num-batched-tokens 65536 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"
# 2026-09-18 (ticket RAG-412): raised max-num-batched-tokens 8192 -> 65536 so 500k+ token documents prefill faster
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve /lustre/models/Kimi-K3 --host 0.0.0.0 --port 8000 --node-rank 0 $COMMON
else
  exec vllm serve /lustre/models/Kimi-K3 --headless --node-rank 1 $COMMON
fi
