#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=hgx
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=112
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/shared/ops/k3/logs/slurm-%j.out

set -u
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_ADDR=$(getent hosts "$HEAD" | awk '{print $1}')
# node-local scratch for compile caches; /tmp is wiped by the site epilog
export VLLM_CACHE_ROOT=/tmp/vllm-cache-$SLURM_JOB_ID
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export HF_HOME=/shared/models/hf
export HF_HUB_OFFLINE=1

echo "k3-serve: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, head $HEAD ($MASTER_ADDR), started $(date)"
echo "k3-serve: image /shared/images/vllm-openai+kimi-k3.sqsh, VLLM_CACHE_ROOT=$VLLM_CACHE_ROOT, ENROOT_DATA_PATH=/tmp/enroot-data/user-$(id -u)"

srun --label --kill-on-bad-exit=1 \
  --container-image=/shared/images/vllm-openai+kimi-k3.sqsh \
  --container-mounts=/shared/models:/shared/models,/tmp:/tmp \
  bash -c '
    EXTRA=""
    if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless"; fi
    exec vllm serve moonshotai/Kimi-K3 \
      --tensor-parallel-size 8 --pipeline-parallel-size 2 \
      --nnodes 2 --node-rank "$SLURM_NODEID" --master-addr "$MASTER_ADDR" --master-port 29531 \
      --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
      --enable-prefix-caching --max-model-len 1048576 --trust-remote-code \
      --served-model-name kimi-k3 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
      --host 0.0.0.0 --port 8000 --gpu-memory-utilization 0.9 $EXTRA'
rc=$?
echo "k3-serve: srun exited with status $rc at $(date)"
exit $rc
