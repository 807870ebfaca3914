#!/bin/bash
# /lustre/inf-plat/k3/launch_node.sh -- one task per node, started by srun
export NO_COLOR=1
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy
COMMON="--trust-remote-code --max-model-len 524288 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --gpu-memory-utilization 0.90 --max-num-seqs 128 \
  --nnodes 2 --node-rank ${SLURM_NODEID} --master-addr ${MASTER_ADDR} --master-port ${MASTER_PORT}"

if [ "${SLURM_NODEID}" = "0" ]; then
  exec vllm serve /models/Kimi-K3 ${COMMON} --served-model-name kimi-k3 --host 0.0.0.0 --port 8000 \
       --enable-log-requests \
       --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3
else
  exec vllm serve /models/Kimi-K3 ${COMMON} --headless
fi
