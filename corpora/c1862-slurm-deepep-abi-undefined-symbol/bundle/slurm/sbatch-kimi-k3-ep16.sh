#!/bin/bash
#SBATCH --job-name=kimi-k3-ep16
#SBATCH --partition=gb300
#SBATCH --account=inference
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/shared/logs/%x-%j.out

set -euo pipefail
IMG=/shared/enroot/k3-ep-20261117.sqsh
NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
HEAD=$(echo "$NODES" | head -n1)
HEAD_IP=$(getent ahostsv4 "$HEAD" | awk 'NR==1{print $1}')
echo "HEAD=$HEAD HEAD_IP=$HEAD_IP NODES=$SLURM_JOB_NODELIST"
echo "IMAGE=$IMG  (sha256 $(sha256sum $IMG | cut -c1-16)...)"
echo "starting vllm on 2 nodes (DP=2, TP=8, wide EP=16, all2all=deepep_v2)"

export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy
export NVSHMEM_IB_ENABLE_IBGDA=1

srun --label --container-image="$IMG" \
     --container-mounts=/shared/models:/models:ro,/dev/infiniband:/dev/infiniband \
     --container-env=NCCL_DEBUG,NCCL_DEBUG_SUBSYS,NCCL_IB_HCA,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,UCX_TLS,NVSHMEM_IB_ENABLE_IBGDA \
     bash -c '
  EXTRA=""
  if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless --data-parallel-start-rank $SLURM_NODEID"; fi
  exec vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
    --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
    --data-parallel-address '"$HEAD_IP"' --data-parallel-rpc-port 13345 \
    --enable-expert-parallel --all2all-backend deepep_v2 \
    --max-model-len 1048576 --gpu-memory-utilization 0.9 --enable-prefix-caching \
    --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 $EXTRA'
