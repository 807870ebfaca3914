#!/bin/bash
#SBATCH --job-name=kimi-k3-srv
#SBATCH --partition=inf-h200
#SBATCH --account=llm-eval
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=224
#SBATCH --exclusive
#SBATCH --time=3-00:00:00
#SBATCH --output=slurm-%j.out

set -euo pipefail
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy
export HF_HUB_OFFLINE=1
export VLLM_HOST_IP_IFNAME=bond0

nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
head=${nodes[0]}
head_ip=$(getent hosts "$head" | awk '{print $1}')
log() { echo "[$(date +%FT%T)] $*"; }

log "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST partition=$SLURM_JOB_PARTITION user=$USER"
log "head node $head ($head_ip); starting ray head (step 0)"
srun --nodes=1 --ntasks=1 -w "$head" --job-name=ray-head \
  apptainer exec --nv /lustre/images/vllm-openai_kimi-k3.sif \
  ray start --head --node-ip-address="$head_ip" --port=6379 --num-gpus=8 --block > logs/ray-head-$SLURM_JOB_ID.log 2>&1 &
sleep 20
log "starting ray worker on ${nodes[1]} (step 1)"
srun --nodes=1 --ntasks=1 -w "${nodes[1]}" --job-name=ray-worker \
  apptainer exec --nv /lustre/images/vllm-openai_kimi-k3.sif \
  ray start --address="$head_ip:6379" --num-gpus=8 --block > logs/ray-worker-$SLURM_JOB_ID.log 2>&1 &
sleep 30
log "ray status:"; apptainer exec /lustre/images/vllm-openai_kimi-k3.sif ray status --address "$head_ip:6379"

log "launching vllm serve on $head (log: logs/vllm-$SLURM_JOB_ID.log)"
apptainer exec --nv /lustre/images/vllm-openai_kimi-k3.sif \
  vllm serve /lustre/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
    --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
    --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.9 \
    --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
    --host 0.0.0.0 --port 8000 > logs/vllm-$SLURM_JOB_ID.log 2>&1 &
until curl -sf "http://$head_ip:8000/health" >/dev/null; do sleep 20; done
log "health check OK: http://$head_ip:8000/health"
wait
