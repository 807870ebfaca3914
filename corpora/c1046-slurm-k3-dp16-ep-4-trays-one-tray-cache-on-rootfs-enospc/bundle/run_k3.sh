#!/bin/bash
# one task per GB300 tray (4 GPUs); DP16 x EP16 over the NVL72 rack fabric
export VLLM_LOGGING_COLOR=0
export NCCL_MNNVL_ENABLE=1
export NCCL_CUMEM_ENABLE=1
COMMON="moonshotai/Kimi-K3 --trust-remote-code --max-model-len 262144 --max-num-seqs 128 \
  --data-parallel-size 16 --data-parallel-size-local 4 \
  --data-parallel-address 10.70.7.11 --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --gpu-memory-utilization 0.9 --enable-prefix-caching"
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000 --served-model-name kimi-k3
else
  exec vllm serve $COMMON --headless --data-parallel-start-rank $((SLURM_NODEID * 4))
fi
