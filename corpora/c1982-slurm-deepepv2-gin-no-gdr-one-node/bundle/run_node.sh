#!/bin/bash
# one vllm process per node; node 0 runs the API server + DP ranks 0-7, the others are headless
COMMON="--trust-remote-code --served-model-name kimi-k3 --max-model-len 1048576 \
  --gpu-memory-utilization 0.92 --enable-prefix-caching \
  --data-parallel-size 32 --data-parallel-size-local 8 \
  --data-parallel-address ${HEAD_IP} --data-parallel-rpc-port 29550 \
  --enable-expert-parallel --all2all-backend deepep_v2"
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve /lustre/models/moonshotai/Kimi-K3 $COMMON \
    --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 --host 0.0.0.0 --port 8000
else
  exec vllm serve /lustre/models/moonshotai/Kimi-K3 $COMMON \
    --data-parallel-start-rank $((SLURM_NODEID * 8)) --headless
fi
