#!/usr/bin/env bash
# started on all four nodes with: pdsh -w h200-r2-n0[1-4] 'NODE_IDX=$(hostname | tail -c 2) /opt/deploy/run-dp-node.sh'
set -euo pipefail
source /opt/vllm/bin/activate
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NVSHMEM_IB_ENABLE_IBGDA=1
export VLLM_ALL2ALL_BACKEND=deepep_low_latency
IDX=$((NODE_IDX-1))
COMMON="moonshotai/Kimi-K2-Instruct-0905 --trust-remote-code --max-model-len 131072 --served-model-name kimi-k2 \
  --data-parallel-size 32 --data-parallel-size-local 8 --data-parallel-address 10.88.2.11 --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_low_latency --gpu-memory-utilization 0.88"
if [ "$IDX" = 0 ]; then
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000 --tool-call-parser kimi_k2 --enable-auto-tool-choice > /var/log/vllm/vllm-serve.log 2>&1
else
  exec vllm serve $COMMON --headless --data-parallel-start-rank $((IDX*8)) > /var/log/vllm/vllm-serve.log 2>&1
fi
