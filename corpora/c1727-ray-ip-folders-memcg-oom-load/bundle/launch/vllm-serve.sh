#!/bin/bash
# run on 10.12.0.35 once `ray status` shows 2 nodes / 16 GPUs
docker exec k3-ray-head vllm serve /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 262144 --cpu-offload-gb 48 --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  2>&1 | tee /var/log/k3/vllm-serve-$(date -u +%Y%m%d-%H%M).log
