#!/bin/bash
# started by hand on both hosts (screen session "llama405"), NODE_RANK=0 on .17, 1 on .18
NODE_RANK=${NODE_RANK:?}
EXTRA=""; [ "$NODE_RANK" != "0" ] && EXTRA="--headless"
docker run -d --name vllm --gpus all --network host --ipc host --shm-size 32g \
  -v /data/models:/models:ro -e VLLM_HOST_IP=$(hostname -I | awk '{print $1}') \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  vllm/vllm-openai:v0.22.0 \
  /models/Meta-Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 2 --node-rank $NODE_RANK --master-addr 10.40.8.17 --master-port 29511 $EXTRA \
  --max-model-len 65536 --max-num-seqs 96 --gpu-memory-utilization 0.92 --enable-prefix-caching
