#!/usr/bin/env bash
# l40s-srv-02 (10.20.0.12): Ray worker
# copied from the old llama-70b box script, updated image + head address (2026-04-13)
docker run -d --name vllm-ray-worker --gpus all --network host \
  -v /data/hf:/root/.cache/huggingface \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=enp65s0f0 -e GLOO_SOCKET_IFNAME=enp65s0f0 \
  -e VLLM_HOST_IP=10.20.0.12 \
  --entrypoint bash vllm/vllm-openai:v0.19.1 \
  -c "ray start --address=10.20.0.11:6379 --block"
