#!/bin/bash
#SBATCH --job-name=vllm-qwen3
#SBATCH --partition=h200-pp
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=112
#SBATCH --exclusive
#SBATCH --time=12:00:00
#SBATCH --output=slurm-%j.out

source /opt/conda/etc/profile.d/conda.sh
conda activate vllm-0.10.1

export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export RAY_DEDUP_LOGS=0
export VLLM_HOST_IP=$(hostname -I | awk '{print $1}')
export HF_HOME=/lustre/shared/hf

nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
head=${nodes[0]}
head_ip=$(srun --nodes=1 --ntasks=1 -w "$head" hostname -I | awk '{print $1}')
echo "[$(date -Is)] job $SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST head=$head head_ip=$head_ip"

echo "[$(date -Is)] starting ray head on $head"
srun --nodes=1 --ntasks=1 -w "$head" -J ray-head \
    ray start --head --node-ip-address="$head_ip" --port=6379 --num-gpus=8 --block &
sleep 20

for n in "${nodes[@]:1}"; do
  echo "[$(date -Is)] starting ray worker on $n via srun"
  srun --nodes=1 --ntasks=1 -w "$n" -J ray-worker \
      ray start --address="$head_ip:6379" --num-gpus=8 --block &
done
sleep 25
echo "[$(date -Is)] ray status"
ray status --address "$head_ip:6379"

CMD="vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507 --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray --max-model-len 40960 --gpu-memory-utilization 0.92 --served-model-name qwen3-235b --port 8000"
echo "[$(date -Is)] launching: $CMD"
$CMD
