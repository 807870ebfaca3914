#!/bin/bash
# started by hand for the soak test
vllm serve Qwen/Qwen3-235B-A22B-FP8 --tensor-parallel-size 8 --max-model-len 32768 \
  --served-model-name qwen3-235b --gpu-memory-utilization 0.9
