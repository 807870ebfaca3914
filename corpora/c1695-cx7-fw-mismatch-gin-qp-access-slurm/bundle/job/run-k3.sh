#!/bin/bash
# started once per node by srun; node 0 is the API head, the others run headless DP engines
HEAD=10.66.4.113
ARGS=(/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code
      --tensor-parallel-size 8 --data-parallel-size 4 --data-parallel-size-local 1
      --data-parallel-address $HEAD --data-parallel-rpc-port 13345
      --enable-expert-parallel --all2all-backend deepep_v2
      --max-model-len 1048576 --kv-cache-dtype fp8 --gpu-memory-utilization 0.9
      --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
      --disable-uvicorn-access-log)
echo "run-k3.sh: host=$(hostname -s) SLURM_NODEID=$SLURM_NODEID role=$([ $SLURM_NODEID = 0 ] && echo head || echo headless) dp_start_rank=$SLURM_NODEID"
if [ "$SLURM_NODEID" = 0 ]; then
  exec vllm serve "${ARGS[@]}" --host 0.0.0.0 --port 8000
else
  exec vllm serve "${ARGS[@]}" --headless --data-parallel-start-rank $SLURM_NODEID
fi
