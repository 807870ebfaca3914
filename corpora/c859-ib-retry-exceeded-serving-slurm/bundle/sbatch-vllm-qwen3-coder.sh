#!/bin/bash
#SBATCH --job-name=vllm-qwen3-coder-480b
#SBATCH --partition=h200
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/scratch/svc-llm/jobs/slurm-%j.out

set -x
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent ahostsv4 "$HEAD" | awk 'NR==1{print $1}')
echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST: head=$HEAD ($HEAD_IP)"
set +x

export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_DEBUG_FILE=/scratch/svc-llm/jobs/$SLURM_JOB_ID/nccl/nccl.%h.%p.log
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export VLLM_LOG_STATS_INTERVAL=60
mkdir -p /scratch/svc-llm/jobs/$SLURM_JOB_ID/nccl

srun --label --container-image=/scratch/images/vllm-openai+v0.12.0.sqsh --container-mounts=/lustre/models:/lustre/models,/scratch:/scratch \
  bash -c '
  if [ "$SLURM_NODEID" = "0" ]; then EXTRA=""; else EXTRA="--headless"; fi
  exec vllm serve /lustre/models/Qwen3-Coder-480B-A35B-Instruct --served-model-name qwen3-coder-480b \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank $SLURM_NODEID \
    --master-addr '"$HEAD_IP"' --master-port 29611 --max-model-len 131072 --gpu-memory-utilization 0.92 \
    --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser qwen3_coder --disable-uvicorn-access-log $EXTRA'
