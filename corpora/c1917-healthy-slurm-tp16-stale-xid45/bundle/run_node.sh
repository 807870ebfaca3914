#!/bin/bash
# /lustre/projects/llm-serve/k3/run_node.sh  -- one task per node
export HF_HUB_OFFLINE=1
export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export NCCL_SOCKET_IFNAME=ib0
export GLOO_SOCKET_IFNAME=ib0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export UCX_TLS=rc,cuda_copy
export VLLM_ENGINE_READY_TIMEOUT_S=3600
extra=""
if [ "$SLURM_NODEID" != "0" ]; then extra="--headless"; fi
exec vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 16 --nnodes 2 --node-rank $SLURM_NODEID --master-addr $HEAD_IP --master-port 29611 \
  --enable-expert-parallel --all2all-backend deepep_v2 \
  --max-model-len 262144 --gpu-memory-utilization 0.90 --enable-prefix-caching \
  --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2 \
  --disable-uvicorn-access-log $extra
