#!/bin/bash
# one task per tray; node rank = SLURM_NODEID
EXTRA=()
[[ "$SLURM_NODEID" != 0 ]] && EXTRA+=(--headless)
exec vllm serve /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 16 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 \
  --nnodes 4 --node-rank "$SLURM_NODEID" --master-addr "$MASTER_ADDR" --master-port "$MASTER_PORT" "${EXTRA[@]}"
