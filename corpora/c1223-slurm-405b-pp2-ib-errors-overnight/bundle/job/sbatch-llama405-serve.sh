#!/bin/bash
#SBATCH --job-name=llama405-serve
#SBATCH --partition=inference
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=3-00:00:00
#SBATCH --output=/shared/logs/%x-%j.out
set -x
source /shared/envs/vllm-0.17/bin/activate
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=ens21f0np0
export GLOO_SOCKET_IFNAME=ens21f0np0
export HF_HUB_OFFLINE=1
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, head $HEAD"
srun -l --kill-on-bad-exit=0 bash -c '
  EXTRA=""; [ "$SLURM_NODEID" != 0 ] && EXTRA="--headless"
  exec vllm serve /shared/models/Llama-3.1-405B-Instruct-FP8 \
      --tensor-parallel-size 8 --pipeline-parallel-size 2 \
      --nnodes 2 --node-rank "$SLURM_NODEID" --master-addr '"$HEAD"' --master-port 29511 \
      --max-model-len 65536 --served-model-name llama-405b --port 8080 \
      --disable-uvicorn-access-log $EXTRA'

