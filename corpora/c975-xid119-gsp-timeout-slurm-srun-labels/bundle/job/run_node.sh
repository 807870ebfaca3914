#!/bin/bash
# one task per node; SLURM_NODEID 0 serves the API, the other node runs headless workers
source /shared/venvs/vllm-0.14.1/bin/activate
export VLLM_HOST_IP=$(hostname -i | awk '{print $1}')
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export HF_HUB_OFFLINE=1
EXTRA=""
if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless"; fi
exec vllm serve /lustre/models/GLM-4.6 --served-model-name glm-4.6 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes "$SLURM_NNODES" --node-rank "$SLURM_NODEID" --master-addr "$MASTER_IP" --master-port 29500 \
  --max-model-len 131072 --gpu-memory-utilization 0.90 --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser glm45 --reasoning-parser glm45 \
  --host 0.0.0.0 --port 8000 $EXTRA
