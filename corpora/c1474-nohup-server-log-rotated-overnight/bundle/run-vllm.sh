#!/usr/bin/env bash
# /opt/llm/run-vllm.sh  -- started by hand (ssh, svc-llm) on inf-a100-04
# restarted 2024-11-18 ~16:36 to turn on prefix caching and raise max-num-seqs 32 -> 64
set -euo pipefail
source /opt/llm/venv/bin/activate          # vllm==0.6.3.post1, torch 2.4.0+cu121
export CUDA_VISIBLE_DEVICES=2,3            # GPUs 0,1 belong to the embedding service
export HF_HOME=/models/.hf
mkdir -p /var/log/vllm /run/vllm
if [[ -f /run/vllm/server.pid ]] && kill -0 "$(cat /run/vllm/server.pid)" 2>/dev/null; then
  echo "stopping old server $(cat /run/vllm/server.pid)"; kill -TERM "$(cat /run/vllm/server.pid)"; sleep 20
fi
nohup python -m vllm.entrypoints.openai.api_server \
  --model /models/Qwen2.5-32B-Instruct --served-model-name qwen2.5-32b \
  --tensor-parallel-size 2 --max-model-len 16384 --gpu-memory-utilization 0.92 \
  --max-num-seqs 64 --enable-prefix-caching --max-log-len 160 \
  --host 0.0.0.0 --port 8000 >> /var/log/vllm/server.log 2>&1 &
echo $! > /run/vllm/server.pid
echo "started $(cat /run/vllm/server.pid)"
