#!/bin/bash
# /lustre/apps/vllm/run-node.sh  (called once per node by srun)
source /lustre/apps/vllm/venv-0.13.0/bin/activate
MODEL=/lustre/models/Llama-3.1-405B-Instruct-FP8
COMMON="--tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank ${SLURM_NODEID} \
        --master-addr hpc-gpu-041 --master-port 29555 --max-model-len 32768 --gpu-memory-utilization 0.92"
if [ "${SLURM_NODEID}" -eq 0 ]; then
  exec vllm serve ${MODEL} --served-model-name llama-405b ${COMMON} --disable-uvicorn-access-log
else
  exec vllm serve ${MODEL} --headless ${COMMON}
fi
