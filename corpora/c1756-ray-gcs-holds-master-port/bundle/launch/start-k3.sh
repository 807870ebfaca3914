#!/usr/bin/env bash
# usage: start-k3.sh <node_rank>      (run on every node; node_rank 0 = API head)
# 2026-11-18: moved from the ray-based launcher to native --nnodes multi-node (mp executor)
set -euo pipefail
source /etc/k3/cluster.env
RANK_ARG=${1:?node rank}
EXTRA=()
[[ $RANK_ARG -gt 0 ]] && EXTRA+=(--headless)
docker rm -f vllm-k3 2>/dev/null || true
docker run -d --name vllm-k3 --restart on-failure:4 --runtime nvidia --gpus all \
  --network host --ipc host --shm-size 64g --ulimit memlock=-1 \
  -e NCCL_IB_HCA=$NCCL_IB_HCA -e NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME -e GLOO_SOCKET_IFNAME=$GLOO_SOCKET_IFNAME \
  -e UCX_TLS=$UCX_TLS -e HF_HOME=$HF_HOME -v /models:/models \
  $IMAGE $MODEL --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --nnodes $NNODES --node-rank $RANK_ARG --master-addr $HEAD_ADDR --master-port $HEAD_PORT "${EXTRA[@]}"
