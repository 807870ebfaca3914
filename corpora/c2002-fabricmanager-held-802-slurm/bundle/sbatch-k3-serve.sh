#!/bin/bash
#SBATCH --job-name=k3-serve-prod
#SBATCH --partition=h200-infer
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=200
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/lustre/svc/k3/logs/slurm-%j.out

# Kimi K3 on two HGX H200 nodes: TP=8 inside a node, PP=2 across the two nodes (IB for PP send/recv).
HEAD_NODE=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent ahostsv4 "${HEAD_NODE}-mgmt" | awk 'NR==1{print $1}')

export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export NCCL_DEBUG=WARN
export VLLM_LOGGING_COLOR=0
export HF_HUB_OFFLINE=1

srun -l --kill-on-bad-exit=0 \
  --container-image=vllm/vllm-openai:kimi-k3 \
  --container-mounts=/lustre/models:/models:ro,/lustre/svc/k3/cache:/root/.cache \
  --no-container-mount-home --container-env=NCCL_IB_HCA,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,NCCL_DEBUG \
  bash -c '
    EXTRA=""
    if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless"; fi
    exec vllm serve /models/moonshotai/Kimi-K3 \
      --served-model-name kimi-k3 --trust-remote-code \
      --tensor-parallel-size 8 --pipeline-parallel-size 2 \
      --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
      --enable-prefix-caching --max-model-len 524288 --gpu-memory-utilization 0.92 \
      --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
      --nnodes 2 --node-rank "$SLURM_NODEID" --master-addr '"$HEAD_IP"' --master-port 29531 $EXTRA'
