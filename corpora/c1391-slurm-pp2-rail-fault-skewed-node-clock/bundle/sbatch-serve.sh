#!/bin/bash
#SBATCH -J dsv31-serve
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH -o slurm-%j.out
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export VLLM_LOG_STATS_INTERVAL=60
export MASTER_ADDR=$(scontrol show hostnames $SLURM_NODELIST | head -1 | xargs getent hosts | awk '{print $1}')
echo "=== job $SLURM_JOB_ID ($(scontrol show hostnames $SLURM_NODELIST | paste -sd,)) starting $(date) on $(hostname)"
echo "=== MASTER_ADDR=$MASTER_ADDR MASTER_PORT=29511 NNODES=2"
srun -l --kill-on-bad-exit=1 bash -c '
  if [ "$SLURM_NODEID" = 0 ]; then EXTRA=""; else EXTRA="--headless"; fi
  exec /opt/vllm-env/bin/vllm serve /lustre/models/DeepSeek-V3.1 --trust-remote-code \
     -tp 8 -pp 2 --nnodes 2 --node-rank $SLURM_NODEID --master-addr $MASTER_ADDR --master-port 29511 \
     --max-model-len 65536 --gpu-memory-utilization 0.92 --enable-prefix-caching --disable-uvicorn-access-log $EXTRA'
echo "=== job $SLURM_JOB_ID step exited rc=$? at $(date)"
