#!/bin/bash
source /lustre/envs/vllm-0.11/bin/activate
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
echo "$(date)  host=$(hostname -s)  SLURM_JOB_ID=$SLURM_JOB_ID  SLURM_NODEID=$SLURM_NODEID  role=$([ $SLURM_NODEID = 0 ] && echo head || echo headless)"
COMMON="--tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-address 10.60.2.11 --data-parallel-rpc-port 13345 --enable-expert-parallel --max-model-len 131072 --gpu-memory-utilization 0.9 --enable-prefix-caching"
if [ "$SLURM_NODEID" = 0 ]; then
  exec vllm serve /lustre/models/Qwen3-235B-A22B-Instruct-2507-FP8 --served-model-name qwen3-235b-fp8 --host 0.0.0.0 --port 8000 $COMMON
else
  exec vllm serve /lustre/models/Qwen3-235B-A22B-Instruct-2507-FP8 --headless --data-parallel-start-rank 1 $COMMON
fi
