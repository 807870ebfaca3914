#!/bin/bash
# /opt/k3/launch.sh  -- kimi-k3 single node (8x B300), started by k3-serve.service
# 2026-11-20 raised gpu-memory-utilization 0.92 -> 0.97 to get ~1.8x concurrency at 1M context (CHG-10418)
exec docker run --rm --name kimi-k3 --runtime nvidia --gpus all --network host --ipc host \
  --ulimit memlock=-1 --ulimit stack=67108864 -v /data/models:/models:ro -v /data/hf:/root/.cache/huggingface \
  -e HF_HOME=/root/.cache/huggingface -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.97 --max-logprobs 20 \
  --enable-log-requests --max-log-len 200 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 2>&1 | tee -a /var/log/k3/vllm-serve.log
