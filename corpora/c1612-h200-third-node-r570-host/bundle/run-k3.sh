#!/bin/bash
# /opt/k3/run-k3.sh  -- started on all three nodes with:
#   pdsh -w h200-rk4-0[1-3] 'RANK=$(( ${HOSTNAME: -1} - 1 )) /opt/k3/run-k3.sh'
set -euo pipefail
IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1)
HEADLESS=""
if [ "${RANK}" != "0" ]; then HEADLESS="--headless"; fi
docker rm -f vllm-k3 2>/dev/null || true
docker run -d --name vllm-k3 --gpus all --network host --ipc host --shm-size 32g \
  -v /mnt/models:/models:ro -v /var/cache/vllm:/root/.cache \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e VLLM_HOST_IP=${IP} \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e UCX_TLS=rc,cuda_copy \
  vllm/vllm-openai:kimi-k3 \
  --model /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 3 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --max-model-len 262144 --gpu-memory-utilization 0.92 --port 8000 \
  --nnodes 3 --node-rank ${RANK} --master-addr 10.40.3.11 --master-port 29600 ${HEADLESS}
