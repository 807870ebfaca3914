#!/bin/bash
# run by the on-call from a laptop; vLLM is started inside gpu worker A and logs to the shared PVC
kubectl -n llm-prod exec kimi-k3-gpu-worker-2lf8d -c ray-worker -- bash -c '\
  nohup vllm serve moonshotai/Kimi-K3 --trust-remote-code --distributed-executor-backend ray \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
    --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 524288 \
    --gpu-memory-utilization 0.9 --served-model-name kimi-k3 --disable-uvicorn-access-log \
    --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
    > /mnt/logs/vllm-serve-$(date -u +%Y%m%d-%H%M).log 2>&1 &'
