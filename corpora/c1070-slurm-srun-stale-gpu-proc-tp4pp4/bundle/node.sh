#!/bin/bash
source /home/svc-llm/venvs/vllm-0.15/bin/activate
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_SOCKET_IFNAME=ib0 NCCL_IB_HCA=mlx5
HEADLESS=""; [ "$SLURM_NODEID" != 0 ] && HEADLESS=--headless
exec vllm serve /lustre/models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b --tensor-parallel-size 4 --pipeline-parallel-size 4 \
  --nnodes 4 --node-rank $SLURM_NODEID --master-addr 10.80.2.41 --master-port 29600 $HEADLESS --max-model-len 65536 --gpu-memory-utilization 0.9
