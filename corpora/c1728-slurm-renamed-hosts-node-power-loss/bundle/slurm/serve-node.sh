#!/bin/bash
# one task per node; SLURM_NODEID 0 runs the API server, the others are headless DP engines
set -x
COMMON="--served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 8 \
  --data-parallel-size 4 --data-parallel-size-local 1 --data-parallel-address ${HEAD_ADDR} --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.90"
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve /models/moonshotai/Kimi-K3 $COMMON
else
  exec vllm serve /models/moonshotai/Kimi-K3 $COMMON --headless --data-parallel-start-rank $SLURM_NODEID
fi
