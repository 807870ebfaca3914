#!/bin/bash
# serve.sh -- run on k3-ray-h01 after both Ray containers are up
LOG=/var/log/k3/vllm-serve-$(date -u +%Y%m%dT%H%MZ).log
echo "[serve.sh] docker exec ray-head vllm serve moonshotai/Kimi-K3 ...  (started $(date -u +%FT%TZ) on $(hostname))" | tee $LOG
docker exec ray-head vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --gpu-memory-utilization 0.9 \
  --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2 2>&1 | tee -a $LOG
echo "[serve.sh] vllm serve exited with status ${PIPESTATUS[0]} at $(date -u +%FT%TZ)" | tee -a $LOG
