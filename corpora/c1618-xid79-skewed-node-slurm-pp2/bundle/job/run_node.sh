#!/bin/bash
# started once per node by srun; node 0 runs the API server + engine core + PP stage 0,
# node 1 runs headless with PP stage 1
ARGS=(/lustre/svc-llm/models/Kimi-K3
      --served-model-name kimi-k3
      --trust-remote-code
      --tensor-parallel-size 8 --pipeline-parallel-size 2
      --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided
      --enable-prefix-caching
      --max-model-len 262144
      --gpu-memory-utilization 0.92
      --disable-uvicorn-access-log
      --nnodes 2 --node-rank "${SLURM_NODEID}"
      --master-addr "${MASTER_IP}" --master-port "${MASTER_PORT}")
if [ "${SLURM_NODEID}" -ne 0 ]; then ARGS+=(--headless); fi
echo "[run_node] $(hostname -s) node_rank=${SLURM_NODEID} starting vllm serve at $(date -u +%FT%TZ)"
exec vllm serve "${ARGS[@]}"
