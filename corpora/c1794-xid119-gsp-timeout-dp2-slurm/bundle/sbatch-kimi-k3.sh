#!/bin/bash
#SBATCH --job-name=kimi-k3-prod
#SBATCH --partition=gpu-b200
#SBATCH --account=inference
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=224
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=slurm-%j.out

# Kimi K3 long-context endpoint (prod-batch): DP=2 (one engine per node) x TP=8, EP=16 over IB
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent ahostsv4 "$HEAD" | awk 'NR==1{print $1}')

export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy
export VLLM_LOG_STATS_INTERVAL=30
export HF_HUB_OFFLINE=1

COMMON="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 1048576 --gpu-memory-utilization 0.9 --disable-uvicorn-access-log \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"

srun --label --container-image=vllm/vllm-openai:kimi-k3 \
     --container-mounts=/lustre/models:/models:ro \
     --container-env=NCCL_DEBUG,NCCL_IB_HCA,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,UCX_TLS,VLLM_LOG_STATS_INTERVAL,HF_HUB_OFFLINE \
     bash -c "if [ \$SLURM_NODEID -eq 0 ]; then vllm serve $COMMON --host 0.0.0.0 --port 8000; \
              else vllm serve $COMMON --headless --data-parallel-start-rank 1; fi"
