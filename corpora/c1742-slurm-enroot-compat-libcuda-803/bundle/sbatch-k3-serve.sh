#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=inference
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=112
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/lustre/fs1/k3/logs/%x-%j.out

set -u
IMG=/lustre/fs1/images/vllm-k3_0.27.1-cu130-compat.sqsh
MOUNTS=/lustre/fs1/models:/models,/lustre/fs1/k3/cache:/root/.cache
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent ahostsv4 "${HEAD}-ib0" | awk 'NR==1{print $1}')
export NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=ib0 GLOO_SOCKET_IFNAME=ib0 VLLM_HOST_IP_IFACE=ib0
echo "== k3-serve job $SLURM_JOB_ID on $(scontrol show hostnames $SLURM_JOB_NODELIST | paste -sd,) (partition $SLURM_JOB_PARTITION) =="
echo "== image $IMG, head $HEAD ($HEAD_IP) =="

echo "== preflight =="
srun -l --container-image="$IMG" --container-mounts="$MOUNTS" --no-container-mount-home bash -c \
  'echo "$(hostname) driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1) gpus=$(nvidia-smi -L | wc -l) libcuda.so.1 -> $(readlink -f $(ldconfig -p | awk "/libcuda.so.1 /{print \$NF; exit}"))"'

echo "== starting vllm serve (node_rank 0 = API server, node_rank 1 = headless) =="
T0=$SECONDS
srun -l --container-image="$IMG" --container-mounts="$MOUNTS" --no-container-mount-home --export=ALL,HEAD_IP="$HEAD_IP" bash -c '
  EXTRA=""; [ "$SLURM_NODEID" != 0 ] && EXTRA="--headless"
  exec vllm serve /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank $SLURM_NODEID \
    --master-addr $HEAD_IP --master-port 29511 \
    --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
    --max-model-len 1048576 --gpu-memory-utilization 0.9 --trust-remote-code \
    --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 $EXTRA'
RC=$?
echo "== vllm serve exited with status $RC after $((SECONDS-T0)) s =="
exit $RC
