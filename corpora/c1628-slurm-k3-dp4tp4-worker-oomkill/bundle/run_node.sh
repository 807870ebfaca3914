#!/bin/bash
# started once per node by srun (task 0 = head with the API servers, task 1 = headless engines)
set -euo pipefail

export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_TIMEOUT=22
export UCX_TLS=rc,cuda_copy
export VLLM_LOG_STATS_INTERVAL=60
export VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1)

COMMON="/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 4 --data-parallel-size 4 --data-parallel-size-local 2 \
  --data-parallel-address ${HEAD_IP} --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 \
  --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 \
  --kv-offloading-backend native --kv-offloading-size 384"

if [ "${SLURM_NODEID}" = "0" ]; then
  echo "[run_node] host=$(hostname) SLURM_NODEID=${SLURM_NODEID} SLURM_PROCID=${SLURM_PROCID} head=${HEAD_IP} role=head (dp ranks 0-1)"
  exec vllm serve ${COMMON} --api-server-count 2 --port 8000 --disable-uvicorn-access-log
else
  echo "[run_node] host=$(hostname) SLURM_NODEID=${SLURM_NODEID} SLURM_PROCID=${SLURM_PROCID} head=${HEAD_IP} role=headless (dp ranks 2-3)"
  exec vllm serve ${COMMON} --headless --data-parallel-start-rank 2
fi
