#!/bin/bash
# /shared/k3/run-node.sh -- one task per node; node 0 serves the API, node 1 runs headless workers
set -x
EXTRA=""
if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless"; fi
exec vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank "$SLURM_NODEID" \
  --master-addr "$HEAD_IP" --master-port 29533 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --port 8000 $EXTRA
