#!/bin/bash
# llama-3.3-70b on the upper half of gpu-h100-sxm-05 (GPUs 0-3 are booked by the research team)
# started with: nohup ./run.sh > /data/logs/vllm-$(date +%Y%m%d).log 2>&1 &
source /opt/vllm/bin/activate
export CUDA_VISIBLE_DEVICES=4,5,6,7
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT
export HF_HOME=/data/hf
exec vllm serve meta-llama/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b \
  --host 0.0.0.0 --port 8000 --tensor-parallel-size 4 --max-model-len 32768 \
  --max-num-seqs 64 --disable-log-requests
