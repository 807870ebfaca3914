#!/bin/bash
# run on each node: NODE_RANK=0 on hpc-h2-0409 (head), 1/2/3 on 0410/0412/0413
set -e
IMG=vllm/vllm-openai:kimi-k3@sha256:7e1f0c44b5d9a3f1c2e08b6a9d4c51e7f3a2b8c9d0e1f2a3b4c5d6e7f8091a2b   # 0.27.1, pulled 2026-12-09
EXTRA=""
[ "$NODE_RANK" != "0" ] && EXTRA="--headless"
docker run -d --name k3 --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband --cap-add IPC_LOCK \
  --env-file /etc/k3/k3.env -e VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1) \
  -v /models:/models:ro \
  $IMG moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 4 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --nnodes 4 --node-rank $NODE_RANK --master-addr 10.30.9.21 --master-port 29511 $EXTRA \
  --max-model-len 524288 --gpu-memory-utilization 0.92 --enable-prefix-caching \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3
