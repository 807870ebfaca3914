#!/bin/bash
# head container entrypoint (fra-gpu-21). worker: ray start --block --address=10.20.0.21:6379 on fra-gpu-22
docker run -d --name vllm-head --gpus all --network host --ipc host --shm-size 32g \
  -v /models:/models:ro -e NCCL_SOCKET_IFNAME=enp12s0 -e GLOO_SOCKET_IFNAME=enp12s0 \
  --entrypoint /bin/bash vllm/vllm-openai:v0.10.1.1 -c \
  'ray start --head --port=6379 --dashboard-host=0.0.0.0 && /opt/wait_nodes.sh 2 && \
   vllm serve /models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b --tensor-parallel-size 8 --pipeline-parallel-size 2 \
   --distributed-executor-backend ray --max-model-len 16384 --max-num-seqs 64 --gpu-memory-utilization 0.92'
