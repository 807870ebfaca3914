#!/usr/bin/env bash
# Kimi K3 on r4-n11 (node_rank 0, API) + r4-n12 (node_rank 1, headless).
# Same script on both nodes:  ./run-k3.sh 0   (on n11)   ./run-k3.sh 1   (on n12)
set -euo pipefail
NODE_RANK=${1:?usage: run-k3.sh <node_rank>}
HEAD_IP=10.44.3.11
IMAGE=vllm/vllm-openai:kimi-k3
EXTRA=()
[[ "$NODE_RANK" != 0 ]] && EXTRA=(--headless)

docker rm -f vllm-k3 >/dev/null 2>&1 || true
docker run -d --name vllm-k3 --runtime nvidia --gpus all \
  --ipc=host --network host --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband --env-file /etc/k3/k3.env \
  -v /data/models:/models:ro -v /data/cache/vllm:/root/.cache/vllm \
  "$IMAGE" /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --nnodes 2 --node-rank "$NODE_RANK" --master-addr "$HEAD_IP" --master-port 29533 "${EXTRA[@]}"
