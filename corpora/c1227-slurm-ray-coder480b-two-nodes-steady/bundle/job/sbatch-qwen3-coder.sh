#!/bin/bash
#SBATCH --job-name=qwen3-coder
#SBATCH --partition=gpu-serve
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
set -x
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 1p); WORKER=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n 2p)
HEAD_IP=$(getent hosts "$HEAD" | awk '{print $1}')
IMG=vllm/vllm-openai:v0.23.0
MOUNTS=/lustre/models:/models
export NCCL_DEBUG=WARN NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 NCCL_SOCKET_IFNAME=ibp0s0 VLLM_LOG_STATS_INTERVAL=60 HF_HOME=/models/hf
srun --nodes=1 --ntasks=1 -w "$HEAD" --container-image=$IMG --container-mounts=$MOUNTS ray start --head --port=6379 --block &
srun --nodes=1 --ntasks=1 -w "$WORKER" --container-image=$IMG --container-mounts=$MOUNTS ray start --address="$HEAD_IP":6379 --block &
sleep 15; ray status --address "$HEAD_IP":6379
srun --overlap --nodes=1 --ntasks=1 -w "$HEAD" --container-image=$IMG --container-mounts=$MOUNTS --output=vllm-%j.log \
  vllm serve Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray --max-model-len 262144 --enable-prefix-caching --enable-auto-tool-choice \
  --tool-call-parser qwen3_coder --served-model-name qwen3-coder --disable-uvicorn-access-log
wait

