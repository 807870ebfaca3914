#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=b200-sc2
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/shared/k3/logs/slurm-%j.out

HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent ahostsv4 "${HEAD}-bond0" | awk 'NR==1{print $1}')
echo "$(date) job $SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST head=$HEAD ($HEAD_IP)"
IMG=/shared/k3/images/vllm-openai+kimi-k3.sqsh
ENVF=/shared/k3/env/nccl-sc2.env
echo "image=$IMG  env=$ENVF"
set -a; source "$ENVF"; set +a

srun -l --container-image="$IMG" \
     --container-mounts=/shared/models:/models:ro,/shared/k3/cache:/root/.cache/vllm \
     --container-env=NCCL_IB_GID_INDEX,NCCL_IB_HCA,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,NCCL_DEBUG,NCCL_DEBUG_TIMESTAMP_FORMAT,UCX_TLS,NO_COLOR,TZ \
     bash -c '
  COMMON="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
    --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
    --max-model-len 1048576 --gpu-memory-utilization 0.90 \
    --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
    --nnodes 2 --master-addr '"$HEAD_IP"' --master-port 29577"
  if [ "$SLURM_NODEID" = 0 ]; then
    exec vllm serve $COMMON --node-rank 0 --port 8000
  else
    exec vllm serve $COMMON --node-rank $SLURM_NODEID --headless
  fi'
