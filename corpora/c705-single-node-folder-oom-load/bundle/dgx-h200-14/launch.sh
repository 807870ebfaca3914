#!/usr/bin/env bash
# Kimi K3 bring-up on one HGX H200 node (8 x 141 GB) -- trial before the GB300 racks arrive
docker run -d --name k3 --gpus all --ipc=host --network host \
  -v /raid/hf:/root/.cache/huggingface \
  vllm/vllm-openai:kimi-k3 \
  moonshotai/Kimi-K3 --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.95
docker logs -f k3 > vllm-serve.log 2>&1
