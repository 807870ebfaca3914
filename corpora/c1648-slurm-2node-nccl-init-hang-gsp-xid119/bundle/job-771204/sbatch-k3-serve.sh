#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=inference
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=96
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/lustre/svc-llm/logs/slurm-%j.out

# Kimi-K3, TP=8 x PP=2 across two H200 nodes, native multi-node mp executor (no Ray)
export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_PORT=29611
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export UCX_TLS=rc,cuda_copy
export VLLM_ENGINE_READY_TIMEOUT_S=3600

srun -l --container-image=/lustre/images/vllm-openai+kimi-k3-0.27.2.sqsh \
     --container-mounts=/lustre/models:/models,/lustre/svc-llm/cache:/root/.cache \
     --container-env=MASTER_ADDR,MASTER_PORT,NCCL_DEBUG,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,NCCL_IB_HCA,UCX_TLS,VLLM_ENGINE_READY_TIMEOUT_S \
  bash -c '
    EXTRA=""
    if [ "$SLURM_NODEID" -ne 0 ]; then EXTRA="--headless"; fi
    exec vllm serve /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
      --tensor-parallel-size 8 --pipeline-parallel-size 2 \
      --nnodes 2 --node-rank "$SLURM_NODEID" --master-addr "$MASTER_ADDR" --master-port "$MASTER_PORT" $EXTRA \
      --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
      --enable-prefix-caching --max-model-len 262144 --host 0.0.0.0 --port 8000 \
      --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3'
