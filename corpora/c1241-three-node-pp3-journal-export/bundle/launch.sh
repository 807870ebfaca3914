#!/usr/bin/env bash
# start-kimi.sh -- run on each node with NODE_RANK=0,1,2 (0 = API server node)
# nodes: see inventory.txt
set -euo pipefail
NODE_RANK=${NODE_RANK:?set NODE_RANK}
EXTRA=""
if [ "$NODE_RANK" != "0" ]; then EXTRA="--headless"; fi

docker run -d --name vllm-node${NODE_RANK} \
  --gpus all --network host --ipc host --pid host \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband \
  --log-driver journald --log-opt tag=vllm-node${NODE_RANK} \
  -v /mnt/models:/models:ro -v /var/cache/vllm:/root/.cache \
  -e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NO_COLOR=1 \
  -e VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1) \
  vllm/vllm-openai:v0.19.1 \
  /models/Kimi-K2-Instruct-0905 \
    --served-model-name kimi-k2 --trust-remote-code \
    --tensor-parallel-size 8 --pipeline-parallel-size 3 \
    --nnodes 3 --node-rank ${NODE_RANK} --master-addr 10.70.0.17 --master-port 29501 \
    --max-model-len 65536 --gpu-memory-utilization 0.92 \
    --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser kimi_k2 ${EXTRA}
