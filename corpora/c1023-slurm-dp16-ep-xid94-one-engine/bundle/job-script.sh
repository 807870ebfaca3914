#!/bin/bash
#SBATCH --job-name=kimi-k3-dp16-ep
#SBATCH --partition=inference
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --output=slurm-%j.out
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 UCX_TLS=rc,cuda_copy
export VLLM_LOG_STATS_INTERVAL=300
srun --nodes=2 --ntasks-per-node=1 --label --kill-on-bad-exit=1 \
  --container-image=/lustre/images/vllm-kimi-k3-0.27.2.sqsh --container-mounts=/lustre:/lustre \
  bash /lustre/jobs/kimi-k3/launch-node.sh

# ---- /lustre/jobs/kimi-k3/launch-node.sh ----
COMMON="--trust-remote-code --max-model-len 262144 --served-model-name kimi-k3 --data-parallel-size 16 --data-parallel-size-local 8 \
  --data-parallel-address 10.52.1.5 --data-parallel-rpc-port 13345 --enable-expert-parallel --all2all-backend deepep_v2 \
  --enable-prefix-caching --gpu-memory-utilization 0.9"
if [ "$SLURM_NODEID" = 0 ]; then
  exec vllm serve /lustre/models/Kimi-K3 $COMMON --port 8000 --disable-uvicorn-access-log
else
  exec vllm serve /lustre/models/Kimi-K3 $COMMON --headless --data-parallel-start-rank 8
fi
