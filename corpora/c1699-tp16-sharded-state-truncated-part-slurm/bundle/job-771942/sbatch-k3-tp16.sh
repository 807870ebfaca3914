#!/bin/bash
#SBATCH --job-name=k3-tp16-serve
#SBATCH --partition=gb300
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=7-00:00:00
#SBATCH --output=slurm-%j.out
# Kimi K3, TP=16 across 2 GB300 nodes, pre-sharded (sharded_state) weights on node-local NVMe.
# Weights are staged per node by the k3-stage job (ranks 0-7 -> first node, ranks 8-15 -> second node).
set -x
date -u
set +x
NODES=($(scontrol show hostnames "$SLURM_JOB_NODELIST"))
HEAD=${NODES[0]}
HEAD_IP=$(getent ahostsv4 "$HEAD" | awk '/STREAM/ {print $1; exit}')
PORT=29610
IMG=/lustre/images/vllm-openai+kimi-k3.sqsh
MODEL=/lscratch/k3/Kimi-K3-tp16-sharded
echo "[k3-tp16] job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST head=$HEAD head_ip=$HEAD_IP port=$PORT"
echo "[k3-tp16] image=$IMG (pyxis) weights=$MODEL (node-local NVMe, staged by k3-stage)"
echo "[k3-tp16] load_format=sharded_state tp=16 ep=16 all2all=deepep_v2"

export NO_COLOR=1
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy
export VLLM_HOST_IP_FROM=bond0
MOUNTS=/lscratch:/lscratch,/lustre/models:/lustre/models

echo "[k3-tp16] step 0: preflight"
srun -l -N2 --ntasks-per-node=1 --container-image=$IMG --container-mounts=$MOUNTS /opt/k3/preflight.sh "$MODEL"

echo "[k3-tp16] step 1: vllm serve (srun -l -N2 --ntasks-per-node=1)"
srun -l -N2 --ntasks-per-node=1 --container-image=$IMG --container-mounts=$MOUNTS bash -c '
  EXTRA=""
  if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless"; fi
  export VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk "{print \$4}" | cut -d/ -f1)
  exec vllm serve '"$MODEL"' --tokenizer '"$MODEL"' --load-format sharded_state \
    --served-model-name kimi-k3 --max-model-len 1048576 \
    --tensor-parallel-size 16 --enable-expert-parallel --all2all-backend deepep_v2 \
    --nnodes 2 --node-rank $SLURM_NODEID --master-addr '"$HEAD_IP"' --master-port '"$PORT"' \
    --enable-prefix-caching --gpu-memory-utilization 0.92 \
    --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
    --host 0.0.0.0 --port 8000 $EXTRA'
RC=$?
echo "[k3-tp16] vllm step exited rc=$RC at $(date -u +%FT%TZ) (uptime ${SECONDS}s)"
echo "[k3-tp16] collecting diagnostics to /lustre/ops/k3/$SLURM_JOB_ID/"
/opt/k3/collect.sh /lustre/ops/k3/$SLURM_JOB_ID
echo "[k3-tp16] done"
exit $RC
