#!/bin/bash
# K3 on one NVL72 rack, two compute trays (4x GB300 each), TP=8 over MNNVL
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_CUMEM_ENABLE=1
export NCCL_MNNVL_ENABLE=2
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=enP5p9s0
export GLOO_SOCKET_IFNAME=enP5p9s0
export UCX_TLS=rc,cuda_copy
MASTER_IP=${MASTER_IP:?set by srun --export}
COMMON="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 8 --enable-expert-parallel
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576 --max-num-seqs 128
  --max-num-batched-tokens 16384 --nnodes 2 --node-rank $SLURM_NODEID --master-addr $MASTER_IP --master-port 29621"
if [ "$SLURM_NODEID" = 0 ]; then
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000 --disable-uvicorn-access-log --shutdown-timeout 30 \
       --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
else
  exec vllm serve $COMMON --headless
fi
