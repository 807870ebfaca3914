#!/bin/bash
#SBATCH --job-name=qwen3c-480b
#SBATCH --partition=h100-inf
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/shared/jobs/%x/slurm-%j.out

set -euo pipefail
module load cuda/12.9
source /shared/envs/vllm-0.19.1/bin/activate

NODES=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
HEAD=${NODES[0]}
MASTER_PORT=29500

export NCCL_SOCKET_IFNAME=ens1f0
export GLOO_SOCKET_IFNAME=ens1f0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9
export NCCL_DEBUG=WARN
export HF_HOME=/shared/hf
export HF_HUB_OFFLINE=1
export VLLM_ENGINE_READY_TIMEOUT_S=1800

echo "[$(date -Is)] job $SLURM_JOB_ID nodes=${NODES[*]} head=$HEAD port=$MASTER_PORT"

COMMON="Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --nnodes 2 --master-addr $HEAD --master-port $MASTER_PORT \
  --max-model-len 131072 --gpu-memory-utilization 0.90 \
  --served-model-name qwen3-coder --enable-auto-tool-choice --tool-call-parser qwen3_coder"

# worker node first, then the head (API server on :8000)
srun --nodes=1 --ntasks=1 -w "${NODES[1]}" --output=/shared/jobs/%x/logs/vllm-%j-%N.log \
  vllm serve $COMMON --node-rank 1 --headless &
sleep 2
srun --nodes=1 --ntasks=1 -w "$HEAD" --output=/shared/jobs/%x/logs/vllm-%j-%N.log \
  vllm serve $COMMON --node-rank 0 --host 0.0.0.0 --port 8000 &
wait
