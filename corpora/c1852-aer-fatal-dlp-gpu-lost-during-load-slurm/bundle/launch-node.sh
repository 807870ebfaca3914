#!/bin/bash
# one task per node; node 0 runs the API server + DP rank 0, node 1 runs DP rank 1 headless
HEAD_IP=$1
ARGS="--model /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 \
  --max-model-len 262144 --gpu-memory-utilization 0.90 --enable-prefix-caching \
  --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2"
echo "launch-node.sh: SLURM_NODEID=$SLURM_NODEID host=$(hostname -s) starting vllm serve (dp rank $SLURM_NODEID)"
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve $ARGS --host 0.0.0.0 --port 8000
else
  exec vllm serve $ARGS --headless --data-parallel-start-rank 1
fi
