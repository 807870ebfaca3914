#!/bin/bash
# run on both nodes; head = b200-r4-n07 (10.40.8.7), worker = b200-r4-n08 (10.40.8.8)
# HF_MOUNT is exported in the operator's ~/.bashrc on the head node ("-v /raid/hf:/root/.cache/huggingface")
MODEL=Qwen/Qwen3-235B-A22B-Instruct-2507
ARGS="--tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-address 10.40.8.7 --data-parallel-rpc-port 13345 --enable-expert-parallel --max-model-len 131072 --gpu-memory-utilization 0.88 --served-model-name qwen3-235b-2507"
if [ "$(hostname -s)" = b200-r4-n07 ]; then ROLE="--host 0.0.0.0"; else ROLE="--headless --data-parallel-start-rank 1"; fi
docker run -d --name vllm --gpus all --network host --ipc host -v /dev/shm:/dev/shm $HF_MOUNT -e HF_TOKEN -e GLOO_SOCKET_IFNAME=bond0 \
  vllm/vllm-openai:v0.11.0 $MODEL $ARGS $ROLE
# logs: docker logs vllm > ~/incident/$(hostname -s)/vllm.log 2>&1
