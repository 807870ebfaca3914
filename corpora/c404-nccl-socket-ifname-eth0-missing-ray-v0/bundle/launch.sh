#!/bin/bash
# run on the head node (a100-ray-01) after `ray start` on both nodes
source /etc/profile.d/nccl.sh       # pushed to every GPU node by ansible role gpu-common
source /opt/vllm-env/bin/activate
vllm serve meta-llama/Llama-3.1-70B-Instruct --served-model-name llama-70b --distributed-executor-backend ray \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --max-model-len 32768 --disable-log-requests \
  2>&1 | tee vllm-serve.log
