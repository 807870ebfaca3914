#!/bin/bash
#SBATCH --job-name=dsv31t
#SBATCH --partition=h200
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=112
#SBATCH --exclusive
#SBATCH --time=2-00:00:00
#SBATCH --output=slurm-%j.out
set -uo pipefail

head_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
head_ip=$(getent ahostsv4 "$head_node" | awk 'NR==1{print $1}')
echo "[$(date -u +%FT%T)] job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, head $head_node ($head_ip)"

source /lustre/shared/envs/vllm-0.28.0/bin/activate
export HF_HOME=/lustre/shared/hf
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export VLLM_LOG_STATS_INTERVAL=300
export VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=300

echo "[$(date -u +%FT%T)] launching vllm on 4 nodes (TP=8, PP=4)"
srun --nodes=4 --ntasks-per-node=1 --job-name=vllm --output=logs/vllm-%x-%j-%N.out bash -c '
  extra=""; [ "$SLURM_NODEID" -gt 0 ] && extra="--headless"
  exec vllm serve deepseek-ai/DeepSeek-V3.1-Terminus --trust-remote-code \
    --served-model-name dsv31t --host 0.0.0.0 --port 8000 --disable-uvicorn-access-log \
    --tensor-parallel-size 8 --pipeline-parallel-size 4 \
    --nnodes 4 --node-rank "$SLURM_NODEID" --master-addr '"$head_ip"' --master-port 29511 $extra \
    --max-model-len 65536 --max-num-seqs 128 --gpu-memory-utilization 0.90 --enable-prefix-caching'
rc=$?
echo "[$(date -u +%FT%T)] vllm step finished rc=$rc"
exit $rc
