#!/bin/bash
#SBATCH --job-name=vllm-llama405b
#SBATCH --partition=h100
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=112
#SBATCH --mem=0
#SBATCH --exclusive
#SBATCH --time=2-00:00:00
#SBATCH --output=/lustre/svc-llm/jobs/slurm-%j.out

module load cuda/12.9
source /opt/vllm-env/bin/activate

export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
export MASTER_IP=10.52.8.31          # ib-ipoib address of the first node of the allocation (static in /etc/hosts)
export NCCL_SOCKET_IFNAME=ib0
export GLOO_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export VLLM_USE_FLASHINFER_SAMPLER=1
export PYTHONFAULTHANDLER=1
export HF_HUB_OFFLINE=1

# one vLLM process per node; node 0 serves the API, the others run headless
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --label --kill-on-bad-exit=0 \
     --output=/lustre/svc-llm/jobs/vllm-%j.out \
     bash -c 'HL=""; [ "$SLURM_NODEID" != "0" ] && HL="--headless";
       exec vllm serve /lustre/models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
         --tensor-parallel-size 8 --pipeline-parallel-size 2 \
         --nnodes $SLURM_NNODES --node-rank $SLURM_NODEID --master-addr $MASTER_IP --master-port 29533 $HL \
         --max-model-len 32768 --max-num-seqs 64 --gpu-memory-utilization 0.92 --enable-prefix-caching \
         --disable-uvicorn-access-log'
