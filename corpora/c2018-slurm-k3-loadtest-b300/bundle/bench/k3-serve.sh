#!/bin/bash
# one task per node; task 0 = API server + DP rank 0, task 1 = headless DP rank 1
COMMON="/lustre/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.61.4.17 --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 1048576 --gpu-memory-utilization 0.9 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"
if [ "$SLURM_NODEID" = "0" ]; then
  echo "[k3-serve.sh] node_rank=0 host=$(hostname -s) role=api+dp0 dp_address=10.61.4.17"
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000
else
  echo "[k3-serve.sh] node_rank=1 host=$(hostname -s) role=headless dp_start_rank=1 dp_address=10.61.4.17"
  vllm serve $COMMON --headless --data-parallel-start-rank 1
fi
