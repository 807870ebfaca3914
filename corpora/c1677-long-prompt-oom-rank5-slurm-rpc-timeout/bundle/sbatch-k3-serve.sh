#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=nvl72-inf
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=/lustre/svc/k3/logs/k3-serve-%j.out
#SBATCH --segment=2
set -x
date -u
scontrol show hostnames $SLURM_JOB_NODELIST
export HEAD_IP=$(getent ahostsv4 $(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1) | awk 'NR==1{print $1}') MASTER_PORT=29650
srun --label --ntasks-per-node=1 \
     --container-image=/lustre/images/vllm+vllm-openai+kimi-k3.sqsh \
     --container-mounts=/lustre/models:/lustre/models,/lustre/cache:/lustre/cache \
     --no-container-mount-home \
     /lustre/svc/k3/launch-node.sh
