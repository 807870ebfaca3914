#!/usr/bin/env bash
# k3-head-a: run inside tmux as svc-llm. Ray is started by ray-head.service / ray-worker.service on each VM.
set -euo pipefail
source /opt/vllm-0.28/bin/activate
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=ens8 GLOO_SOCKET_IFNAME=ens8
export UCX_TLS=rc,cuda_copy
export VLLM_HOST_IP=10.128.0.41
export RAY_DEDUP_LOGS=0
export HF_HUB_OFFLINE=1
RESTART=${RESTART:-0}
echo "[start-k3.sh] ray status OK: $(ray status | grep -c node_) nodes ..." 
vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.9 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --host 0.0.0.0 --port 8000 2>&1 | ts '%Y-%m-%dT%H:%M:%.S' | tee -a /var/log/vllm/k3.log
echo "[start-k3.sh] vllm serve exited with status ${PIPESTATUS[0]}; not restarting (RESTART=$RESTART)" | ts '%Y-%m-%dT%H:%M:%.S' | tee -a /var/log/vllm/k3.log
