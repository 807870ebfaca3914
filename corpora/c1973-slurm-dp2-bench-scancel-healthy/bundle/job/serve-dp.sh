#!/bin/bash
# /lustre/ai/mbauer/k3/serve-dp.sh  -- one task per node
export UCX_TLS=rc,cuda_copy
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export NCCL_DEBUG=WARN
export NVSHMEM_IB_ENABLE_IBGDA=1
COMMON="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --max-model-len 262144 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --gpu-memory-utilization 0.90 --max-num-seqs 256 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000 --disable-uvicorn-access-log
else
  exec vllm serve $COMMON --headless --data-parallel-start-rank 1
fi
