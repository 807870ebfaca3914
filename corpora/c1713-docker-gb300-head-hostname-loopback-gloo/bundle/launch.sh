#!/bin/bash
# /opt/k3/launch.sh  -- run on every tray with: pdsh -w gb300-r4-t0[1-4] /opt/k3/launch.sh
set -euo pipefail
RANK=$(( $(hostname | sed 's/.*-t0*//') - 1 ))
EXTRA=""
[ "$RANK" -gt 0 ] && EXTRA="--headless"
docker rm -f k3 >/dev/null 2>&1 || true
docker run -d --name k3 --gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband -v /raid/hf:/root/.cache/huggingface \
  -e NCCL_SOCKET_IFNAME=enP6p3s0f0np0 -e NCCL_MNNVL_ENABLE=1 -e NCCL_DEBUG=WARN -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --nnodes 4 --node-rank "$RANK" --master-addr gb300-r4-t01 --master-port 29600 \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.9 --trust-remote-code \
  --served-model-name kimi-k3 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 $EXTRA
