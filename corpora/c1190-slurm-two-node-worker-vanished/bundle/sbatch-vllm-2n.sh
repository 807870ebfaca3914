#!/bin/bash
#SBATCH --job-name=vllm-qc480
#SBATCH --partition=gpu-h100
#SBATCH --account=llm-infra
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=3-00:00:00
#SBATCH --output=slurm-%j.out
# interactive coding assistant backend: Qwen3-Coder-480B FP8, TP8 x PP2 over 2 nodes (Ray)
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=ens21f0np0 GLOO_SOCKET_IFNAME=ens21f0np0
export VLLM_HOST_IP_FROM=ens21f0np0
source /opt/venvs/vllm-0.11/bin/activate
srun -l --kill-on-bad-exit=1 bash /home/svc-llm/bin/launch-ray-vllm.sh
