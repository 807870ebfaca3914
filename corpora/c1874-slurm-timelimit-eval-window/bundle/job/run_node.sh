#!/bin/bash
# /shared/k3/run_node.sh - one task per node
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_HCA=${NCCL_IB_HCA:-mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11}
export VLLM_LOG_STATS_INTERVAL=${VLLM_LOG_STATS_INTERVAL:-30}
COMMON="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576 \
  --gpu-memory-utilization 0.90 --nnodes 2 --master-addr $MASTER_IP --master-port 29571"
if [ "$SLURM_NODEID" = "0" ]; then
  echo "[run_node] node_rank=0 host=$(hostname -s) exec vllm serve (head)"
  exec vllm serve $COMMON --node-rank 0 --host 0.0.0.0 --port 8000 --disable-uvicorn-access-log \
       --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
else
  echo "[run_node] node_rank=1 host=$(hostname -s) exec vllm serve --headless"
  exec vllm serve $COMMON --node-rank 1 --headless
fi
