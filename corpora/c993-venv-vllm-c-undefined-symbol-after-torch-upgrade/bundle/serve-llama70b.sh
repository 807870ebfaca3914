#!/usr/bin/env bash
# serve llama-3.1-70b on GPUs 4-7 of mlbox-a100-02 (GPUs 0-3 belong to the eval team)
# started with:  nohup ./serve-llama70b.sh >> /data/logs/vllm-serve.log 2>&1 &
source /opt/venvs/vllm/bin/activate
export CUDA_VISIBLE_DEVICES=4,5,6,7
export HF_HOME=/data/hf
exec python -m vllm.entrypoints.openai.api_server \
    --model /data/models/Meta-Llama-3.1-70B-Instruct \
    --served-model-name llama-3.1-70b-instruct \
    --tensor-parallel-size 4 \
    --dtype bfloat16 \
    --max-model-len 32768 \
    --max-num-seqs 128 \
    --gpu-memory-utilization 0.92 \
    --disable-log-requests \
    --host 0.0.0.0 --port 8000
