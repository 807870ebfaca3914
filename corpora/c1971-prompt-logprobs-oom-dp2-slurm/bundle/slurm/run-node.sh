#!/bin/bash
# one task per node; node 0 runs the API server and DP rank 0, node 1 runs DP rank 1 headless
COMMON="/models/moonshotai/Kimi-K3 --trust-remote-code --max-model-len 1048576 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --gpu-memory-utilization 0.95 --max-num-seqs 128 --max-num-batched-tokens 16384"
if [ "$SLURM_NODEID" = 0 ]; then
  echo "[run-node.sh] $(hostname) SLURM_NODEID=0 -> head: vllm serve (API + DP rank 0)"
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000 --served-model-name kimi-k3 \
    --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
else
  echo "[run-node.sh] $(hostname) SLURM_NODEID=1 -> headless: vllm serve --headless --data-parallel-start-rank 1"
  exec vllm serve $COMMON --headless --data-parallel-start-rank 1
fi
