#!/bin/bash
# started once per node by srun; SLURM_NODEID = 0 on the head
EXTRA=""
[ "$SLURM_NODEID" -gt 0 ] && EXTRA="--headless"
exec vllm serve /models/meta-llama/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
   --tensor-parallel-size 8 --pipeline-parallel-size 3 --nnodes 3 --node-rank "$SLURM_NODEID" \
   --master-addr "$1" --master-port 29511 --max-model-len 65536 --gpu-memory-utilization 0.9 --enable-prefix-caching $EXTRA
