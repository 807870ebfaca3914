#!/bin/bash
# one task per node; node 0 runs the API server + DP ranks 0-7, node 1 runs DP ranks 8-15 headless
HEAD_IP=$1
COMMON="--served-model-name kimi-k3 --trust-remote-code --data-parallel-size 16 --data-parallel-size-local 8 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 --enable-expert-parallel --all2all-backend deepep_v2 \
  --max-model-len 1048576 --gpu-memory-utilization 0.95 --enable-prefix-caching \
  --max-num-batched-tokens 16384 --max-num-seqs 64 --disable-uvicorn-access-log"
if [ "$SLURM_NODEID" = "0" ]; then
  vllm serve /models/Kimi-K3 $COMMON 2>&1 | tee /logs/$(hostname).log
else
  vllm serve /models/Kimi-K3 $COMMON --headless --data-parallel-start-rank 8 2>&1 | tee /logs/$(hostname).log
fi
