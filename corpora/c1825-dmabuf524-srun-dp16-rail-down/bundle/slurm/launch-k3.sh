#!/bin/bash
# one task per node; node 0 runs the API server + DP ranks 0-7, node 1 runs DP ranks 8-15 headless
set -euo pipefail
export VLLM_HOST_IP=$(ip -4 -o addr show dev ${VLLM_HOST_IP_FROM:-bond0} | awk '{print $4}' | cut -d/ -f1)
COMMON=(/models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code
        --data-parallel-size 16 --data-parallel-size-local 8
        --data-parallel-address "$HEAD_ADDR" --data-parallel-rpc-port 13345
        --enable-expert-parallel --all2all-backend deepep_v2
        --max-model-len 262144 --gpu-memory-utilization 0.88 --kv-cache-dtype fp8
        --enable-prefix-caching)
if [ "$SLURM_NODEID" = "0" ]; then
  echo "[launch-k3] host=$(hostname -s) SLURM_NODEID=0 role=head dp_start_rank=0 dp_size_local=8 head_addr=$HEAD_ADDR"
  echo "[launch-k3] CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES image=$SLURM_CONTAINER_IMAGE"
  echo "[launch-k3] $(env | grep -E '^NCCL_(DEBUG|IB_HCA|NET_GDR_LEVEL|SOCKET_IFNAME)=' | sort | paste -sd' ')"
  exec vllm serve "${COMMON[@]}" --host 0.0.0.0 --port 8000 --api-server-count 1 \
       --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3
else
  echo "[launch-k3] host=$(hostname -s) SLURM_NODEID=$SLURM_NODEID role=headless dp_start_rank=8 dp_size_local=8 head_addr=$HEAD_ADDR"
  echo "[launch-k3] CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES image=$SLURM_CONTAINER_IMAGE"
  echo "[launch-k3] $(env | grep -E '^NCCL_(DEBUG|IB_HCA|NET_GDR_LEVEL|SOCKET_IFNAME)=' | sort | paste -sd' ')"
  exec vllm serve "${COMMON[@]}" --headless --data-parallel-start-rank 8
fi
# DP rank mapping: vLLM gives local engine i the GPU with index i, i.e. global DP rank = dp_start_rank + i
