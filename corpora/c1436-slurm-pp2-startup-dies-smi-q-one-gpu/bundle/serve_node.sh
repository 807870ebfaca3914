#!/bin/bash
# launched once per node by srun -l; SLURM_NODEID 0 = hpc-g041 (API server), 1 = hpc-g042 (headless)
source /lustre/envs/vllm-0.27/bin/activate
export NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=ib0 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
EXTRA="--host 0.0.0.0 --port 8511 --served-model-name qwen3-coder"
[ "$SLURM_NODEID" != 0 ] && EXTRA=--headless
exec vllm serve /lustre/models/Qwen3-Coder-480B-A35B-Instruct-FP8 --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 2 --node-rank $SLURM_NODEID --master-addr hpc-g041 --master-port 29511 \
  --max-model-len 262144 --gpu-memory-utilization 0.9 --enable-prefix-caching $EXTRA
