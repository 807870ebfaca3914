#!/bin/bash
#SBATCH -J k3-serve
#SBATCH -p hgx-h200
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH -t 3-00:00:00
#SBATCH -o /lustre/llm-infra/k3/logs/slurm-%j.out

set -euo pipefail
NODES=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
HEAD=$(echo "$NODES" | head -1)
HEAD_IP=$(getent hosts "$HEAD" | awk '{print $1}')
IMAGE=/lustre/images/vllm-openai+kimi-k3-0.27.2.sqsh   # enroot import of docker://vllm/vllm-openai:kimi-k3 (0.27.2)
echo "=== k3-serve: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST (2 nodes x 8 H200) ==="
date
echo "HEAD=$HEAD HEAD_IP=$HEAD_IP IMAGE=$IMAGE"

COMMON="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 1048576 --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"

srun -l --container-image="$IMAGE" --container-mounts=/lustre/models:/models \
  --export=ALL,TZ=UTC,NO_COLOR=1,NCCL_DEBUG=INFO,NCCL_SOCKET_IFNAME=ib0,GLOO_SOCKET_IFNAME=ib0,UCX_TLS=rc,cuda_copy,HF_HUB_OFFLINE=1 \
  bash -c "
    if [ \"\$SLURM_NODEID\" = 0 ]; then
      exec vllm serve $COMMON --host 0.0.0.0 --port 8000
    else
      exec vllm serve $COMMON --headless --data-parallel-start-rank 1
    fi"
rc=$?
echo "=== k3-serve: srun exited with $rc at $(date) ==="
exit $rc
