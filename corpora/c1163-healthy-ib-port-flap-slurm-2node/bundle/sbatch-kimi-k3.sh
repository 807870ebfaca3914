#!/bin/bash
#SBATCH --job-name=kimi-k3-serve
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --partition=inference
#SBATCH --output=slurm-%j.out

export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=ib0 GLOO_SOCKET_IFNAME=ib0
export UCX_TLS=rc,cuda_copy
MASTER=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)

srun --output=vllm-%N.log bash -c '
  HEADLESS=""; [ $SLURM_PROCID -ne 0 ] && HEADLESS=--headless
  exec apptainer exec --nv /lustre/images/vllm-openai_kimi-k3.sif vllm serve /lustre/models/Kimi-K3 --trust-remote-code \
    --served-model-name kimi-k3 --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
    --max-model-len 262144 --gpu-memory-utilization 0.92 \
    --nnodes 2 --node-rank $SLURM_PROCID --master-addr 10.12.0.7 --master-port 29511 $HEADLESS'
