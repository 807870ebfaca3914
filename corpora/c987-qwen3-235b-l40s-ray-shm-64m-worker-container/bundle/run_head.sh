#!/usr/bin/env bash
# l40s-srv-01 (10.20.0.11): Ray head + vLLM driver
docker run -d --name vllm-ray-head --gpus all --network host --ipc=host \
  -v /data/hf:/root/.cache/huggingface \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=enp65s0f0 -e GLOO_SOCKET_IFNAME=enp65s0f0 \
  -e RAY_DEDUP_LOGS=0 -e VLLM_HOST_IP=10.20.0.11 \
  --entrypoint bash vllm/vllm-openai:v0.19.1 \
  -c "ray start --head --port=6379 --dashboard-host=0.0.0.0 --block"

sleep 30
docker exec vllm-ray-head bash -c "vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 \
  --served-model-name qwen3-235b --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --distributed-executor-backend ray --max-model-len 65536 --gpu-memory-utilization 0.92 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser hermes 2>&1 | tee /root/.cache/huggingface/vllm-serve.log"
