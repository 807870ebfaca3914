#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=gb300
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gres=gpu:4
#SBATCH --cpus-per-task=96
#SBATCH --time=2-00:00:00
#SBATCH --output=slurm-%j.out
# nightly eval endpoint for the agent-eval harness (10.70.8.41/42)
set -euo pipefail
source /opt/venvs/k3/bin/activate   # vllm 0.27.1, ray 2.52.1, torch 2.10.0+cu130
export NO_COLOR=1 NCCL_DEBUG=WARN NCCL_MNNVL_ENABLE=1 NCCL_SOCKET_IFNAME=enP22p3s0f0np0 VLLM_USE_RAY_COMPILED_DAG=1
nodes=($(scontrol show hostnames "$SLURM_JOB_NODELIST")); head=${nodes[0]}
head_ip=$(srun -N1 -n1 -w "$head" hostname -i)
echo "[k3-serve] head $head ($head_ip); starting ray head"
srun -N1 -n1 -w "$head" --label ray start --head --node-ip-address="$head_ip" --port=6379 --num-gpus=4 --block &
sleep 15
echo "[k3-serve] starting ray workers on the other 3 nodes"
srun -N3 -n3 -x "$head" --label ray start --address="$head_ip:6379" --num-gpus=4 --block &
sleep 25; ray status
echo "[k3-serve] launching vllm serve on $head, log: logs/vllm-serve-$SLURM_JOB_ID.log"
vllm serve /lustre/models/moonshotai/Kimi-K3 --served-model-name kimi-k3-eval --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 131072 --gpu-memory-utilization 0.88 --max-num-seqs 96 --disable-log-requests --port 8100 \
  > logs/vllm-serve-$SLURM_JOB_ID.log 2>&1 &
vpid=$!
( while sleep 300; do curl -sf http://127.0.0.1:8100/health >/dev/null || echo "[k3-serve] $(date) health check failed (curl rc=$?)"; done ) &
wait $vpid; rc=$?
echo "[k3-serve] vllm serve exited rc=$rc at $(date)"
echo "[k3-serve] stopping ray on all nodes"; srun --overlap -N4 -n4 --label ray stop
exit $rc
