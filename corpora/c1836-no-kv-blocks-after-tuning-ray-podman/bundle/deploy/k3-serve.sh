#!/usr/bin/env bash
# kimi-k3 on h200-b07 (head) + h200-b08 (ray worker), 16x H200, PP=2 x TP=8, Ray executor.
# Run inside the k3-head container on h200-b07 (see podman-run-head.sh); the worker container on
# h200-b08 only runs `ray start --address=10.42.7.11:6379 --block`.
set -euo pipefail
LOG=/var/log/k3/vllm-serve-$(date -u +%Y%m%d-%H%M).log

export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export VLLM_HOST_IP=10.42.7.11

vllm serve moonshotai/Kimi-K3 \
  --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray \
  --pipeline-parallel-size 2 --tensor-parallel-size 8 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 262144 \
  --max-num-batched-tokens 32768 \
  --max-num-seqs 512 \
  --gpu-memory-utilization 0.90 \
  --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  2>&1 | tee "$LOG"
