#!/bin/sh
# run on ws-p100-02 by j.lind, 2025-11-04 14:21 UTC
# --dtype half: the P100 has no bf16
docker run -d --name qwen3b --gpus all --ipc=host -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface \
  vllm/vllm-openai:v0.10.2 \
  --model Qwen/Qwen2.5-3B-Instruct --served-model-name qwen-3b \
  --dtype half --max-model-len 8192 --max-num-seqs 32 \
  --gpu-memory-utilization 0.88 --enforce-eager

$ docker ps -a --filter name=qwen3b
CONTAINER ID   IMAGE                      COMMAND                  CREATED         STATUS                     PORTS     NAMES
5c0e91d7a2f4   vllm/vllm-openai:v0.10.2   "vllm serve --model …"   3 minutes ago   Exited (1) 3 minutes ago             qwen3b
