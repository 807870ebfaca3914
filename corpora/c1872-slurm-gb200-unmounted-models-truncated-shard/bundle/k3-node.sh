#!/bin/bash
# /shared/k3/k3-node.sh -- one task per node; node 0 serves the API, the others are headless DP engines
COMMON="--served-model-name kimi-k3 --tensor-parallel-size 4 --data-parallel-size 4 --data-parallel-size-local 1
        --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 --enable-expert-parallel
        --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 524288 --trust-remote-code"
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve "$MODEL" $COMMON --host 0.0.0.0 --port 8000 \
       --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
else
  exec vllm serve "$MODEL" $COMMON --headless --data-parallel-start-rank "$SLURM_NODEID"
fi
