#!/usr/bin/env bash
# /home/svc-llm/bin/run-qwen3-14b.sh  (started by hand on lab-l4x4-02, 2026-07-08 09:41 UTC)
source /opt/venvs/vllm-0.23/bin/activate
export VLLM_ATTENTION_BACKEND=FLASHINFER      # kept from the 0.18 setup
export VLLM_PLUGINS=acme_vllm_plugins
export HF_HOME=/data/hf
cd /home/svc-llm
nohup vllm serve Qwen/Qwen3-14B --served-model-name qwen3-14b --host 0.0.0.0 --port 8080 \
  --tensor-parallel-size 4 --max-model-len 16384 --gpu-memory-utilization 0.88 \
  --speculative-config '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4}' \
  --disable-log-requests > /home/svc-llm/vllm-logs/qwen3-14b.log 2>&1 &
echo $! > /home/svc-llm/vllm-logs/qwen3-14b.pid
