#!/bin/bash
# /shared/k3/launch_k3.sh -- started by:
#   salloc -N2 -p gpu-b3 --gres=gpu:8 --exclusive -t 04:00:00
#   srun -l --nodes=2 --ntasks-per-node=1 --container-image=vllm/vllm-openai:kimi-k3 \
#        --container-mounts=/lustre/models:/lustre/models,/shared/k3:/shared/k3 --no-container-remap-root \
#        bash /shared/k3/launch_k3.sh 2>&1 | tee /shared/k3/logs/srun-88231.0.log
set -x
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=ens21f0np0
export GLOO_SOCKET_IFNAME=ens21f0np0
export UCX_TLS=rc,cuda_copy
export VLLM_LOGGING_COLOR=0
export HF_HUB_OFFLINE=1
set +x
COMMON="/lustre/models/moonshotai/Kimi-K3 --trust-remote-code --served-model-name Kimi-K3 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.52.7.17 --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching --max-model-len 1048576 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"
if [ "$SLURM_NODEID" = "0" ]; then
  echo "node 0 ($(hostname -s)): starting API server + DP rank 0"
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000
else
  echo "node 1 ($(hostname -s)): starting headless DP rank 1"
  exec vllm serve $COMMON --headless --data-parallel-start-rank 1
fi
