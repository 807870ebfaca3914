#!/bin/bash
# one task per node: node 0 runs the API server + DP ranks 0-7, node 1 runs DP ranks 8-15 headless
MASTER=10.70.3.17
COMMON=(--served-model-name kimi-k3 --trust-remote-code --max-model-len 262144
        --data-parallel-size 16 --data-parallel-size-local 8 --data-parallel-address $MASTER --data-parallel-rpc-port 13345
        --enable-expert-parallel --all2all-backend deepep_v2
        --enable-eplb --eplb-config '{"window_size":1000,"step_interval":12000,"num_redundant_experts":32,"log_balancedness":true,"log_balancedness_interval":1000}'
        --enable-prefix-caching --gpu-memory-utilization 0.95 --max-num-seqs 256 --max-num-batched-tokens 8192
        --disable-uvicorn-access-log --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3)
if [ "$SLURM_NODEID" = 0 ]; then
  echo "[serve_k3.sh] $(hostname -s) SLURM_NODEID=0 role=api+engines dp_start=0 dp_local=8 master=$MASTER"
  exec vllm serve /lustre/models/moonshotai/Kimi-K3 "${COMMON[@]}"
else
  echo "[serve_k3.sh] $(hostname -s) SLURM_NODEID=1 role=headless dp_start=8 dp_local=8 master=$MASTER"
  exec vllm serve /lustre/models/moonshotai/Kimi-K3 "${COMMON[@]}" --headless --data-parallel-start-rank 8
fi
