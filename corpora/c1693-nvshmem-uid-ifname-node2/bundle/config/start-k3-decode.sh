#!/usr/bin/env bash
# start-k3-decode.sh <head|worker>    -- run on each node of pool decode-b200-a by the deploy job
set -euo pipefail
ROLE=${1:?head|worker}
HEAD_ADDR=10.52.11.7
COMMON=(moonshotai/Kimi-K3
  --trust-remote-code --served-model-name kimi-k3
  --data-parallel-size 16 --data-parallel-size-local 8
  --data-parallel-address ${HEAD_ADDR} --data-parallel-rpc-port 13345
  --enable-expert-parallel --all2all-backend deepep_low_latency
  --max-model-len 262144 --max-num-seqs 128 --kv-cache-dtype fp8
  --gpu-memory-utilization 0.88 --enable-prefix-caching
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3)
if [[ $ROLE == head ]]; then
  EXTRA=(--host 0.0.0.0 --port 8000)
else
  EXTRA=(--headless --data-parallel-start-rank 8)
fi
docker rm -f vllm-k3-decode 2>/dev/null || true
docker run -d --name vllm-k3-decode --init --gpus all --ipc=host --network host \
  --shm-size 64g --ulimit memlock=-1 --cap-add IPC_LOCK --device /dev/infiniband \
  --env-file /etc/k3/decode.env -v /models:/models \
  vllm/vllm-openai:kimi-k3@sha256:5c0e9d1f3b7a44e2c18d06b9f2e1a7c3d4b5e6f708192a3b4c5d6e7f8091a2b3 \
  "${COMMON[@]}" "${EXTRA[@]}"
