#!/bin/bash
# /lustre/fsw/infer/k3/serve-node.sh -- one task per tray; node rank 0 runs the API server
EXTRA=""
[ "$SLURM_NODEID" != "0" ] && EXTRA="--headless"
exec vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 4 --node-rank "$SLURM_NODEID" --master-addr 10.52.4.5 --master-port 29511 $EXTRA \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --max-num-seqs 48 --gpu-memory-utilization 0.92 \
  --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2 \
  --host 0.0.0.0 --port 8000
