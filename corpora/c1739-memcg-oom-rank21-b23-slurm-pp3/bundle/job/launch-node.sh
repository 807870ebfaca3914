#!/bin/bash
# one task per node; node 0 serves the API, the others run headless
HEAD_IP=10.60.0.21
EXTRA=""
[ "$SLURM_NODEID" != "0" ] && EXTRA="--headless"
exec vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 3 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --disable-uvicorn-access-log \
  --nnodes 3 --node-rank "$SLURM_NODEID" --master-addr $HEAD_IP --master-port 29511 $EXTRA
