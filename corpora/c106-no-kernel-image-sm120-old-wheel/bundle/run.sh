#!/usr/bin/env bash
# lab-bw-ws01: serve Qwen2.5-32B on both Blackwell cards (copied from the old L40S box)
source /opt/llm/venv/bin/activate
export NCCL_DEBUG=INFO
export HF_HOME=/data/hf
nohup vllm serve Qwen/Qwen2.5-32B-Instruct --served-model-name qwen2.5-32b \
    --tensor-parallel-size 2 --max-model-len 32768 --gpu-memory-utilization 0.9 \
    > serve-qwen32b.log 2>&1 &
