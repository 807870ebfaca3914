#!/bin/bash
export NO_COLOR=1 NCCL_DEBUG=WARN NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9
export NCCL_SOCKET_IFNAME=ens21f0np0 GLOO_SOCKET_IFNAME=ens21f0np0 HF_HUB_OFFLINE=1
echo "[start-node.sh] host=$(hostname -s) SLURM_NODEID=$SLURM_NODEID SLURM_PROCID=$SLURM_PROCID master=$MASTER ($(getent hosts $MASTER | cut -d' ' -f1))"
ARGS="/lustre/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 4 --nnodes 4 --node-rank $SLURM_NODEID \
  --master-addr $MASTER --master-port 29533 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.90"
if [ "$SLURM_NODEID" = 0 ]; then
  exec vllm serve $ARGS --host 0.0.0.0 --port 8000 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
else
  exec vllm serve $ARGS --headless
fi
