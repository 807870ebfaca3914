#!/bin/bash
# /opt/kimi/start-vllm.sh  (same file on both nodes; per-node values come from /etc/vllm/kimi.env)
set -euo pipefail
source /etc/vllm/kimi.env
COMMON="--trust-remote-code --served-model-name kimi-k2 --max-model-len 131072 --gpu-memory-utilization 0.92 \
  --enable-prefix-caching --tensor-parallel-size ${TP} --nnodes ${NNODES} --node-rank ${NODE_RANK} \
  --master-addr ${MASTER_ADDR} --master-port ${MASTER_PORT}"
DOCKER="docker run -d --name vllm-kimi --network host --ipc host --gpus all --shm-size 32g \
  --ulimit memlock=-1 --device /dev/infiniband -v /models:/models --env-file /etc/vllm/nccl.env"
if [ "${NODE_RANK}" = "0" ]; then
  ${DOCKER} vllm/vllm-openai:v0.11.2 /models/Kimi-K2-Instruct --host 0.0.0.0 --port ${PORT} \
    --enable-auto-tool-choice --tool-call-parser kimi_k2 ${COMMON}
else
  ${DOCKER} vllm/vllm-openai:v0.11.2 /models/Kimi-K2-Instruct --headless ${COMMON}
fi
