#!/usr/bin/env bash
# llama-405b fp8, TP=16 over gx-a12 (node rank 0, API) and gx-a19 (node rank 1, headless)
NODE_RANK=${NODE_RANK:?}
EXTRA=""; [ "$NODE_RANK" != "0" ] && EXTRA="--headless"
docker run -d --name vllm-node${NODE_RANK} --gpus all --network host --ipc host \
  --ulimit memlock=-1 --device /dev/infiniband --shm-size 64g \
  -v /raid/models:/models:ro -v /raid/cache:/root/.cache \
  -e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5 -e NCCL_SOCKET_IFNAME=enp226s0 \
  -e VLLM_LOG_STATS_INTERVAL=30 -e NO_COLOR=1 \
  vllm/vllm-openai:v0.18.0 \
  /models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
  --tensor-parallel-size 16 --nnodes 2 --node-rank ${NODE_RANK} \
  --master-addr 10.80.3.12 --master-port 29501 \
  --max-model-len 32768 --gpu-memory-utilization 0.93 --enable-prefix-caching ${EXTRA}
# after /health is green, deploy-check.sh stores `docker top` and the NSpid of every container process
# (needed by our GPU accounting exporter) under /var/log/deploy-check/
