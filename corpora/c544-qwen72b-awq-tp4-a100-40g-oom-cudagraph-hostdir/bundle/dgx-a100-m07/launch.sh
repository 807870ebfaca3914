#!/bin/bash
# qwen2.5-72b (AWQ) for the eval team on GPUs 4-7; 0-3 are the training reservation
source /opt/venvs/vllm/bin/activate
export CUDA_VISIBLE_DEVICES=4,5,6,7
export VLLM_WORKER_MULTIPROC_METHOD=spawn
# bumped 0.90 -> 0.98 on 06-04 to get more KV cache for 32k contexts (ticket EVAL-413)
nohup vllm serve /models/Qwen2.5-72B-Instruct-AWQ --served-model-name qwen2.5-72b \
  --host 0.0.0.0 --port 8011 --tensor-parallel-size 4 \
  --max-model-len 32768 --max-num-seqs 256 --gpu-memory-utilization 0.98 \
  --disable-log-requests > vllm-serve.log 2>&1 &
