#!/bin/bash
# started on each node by pdsh -w hpc-a3-0[1-4] /shared/ops/qwen235/run.sh
NODE_IDX=$(( ${HOSTNAME: -1} - 1 ))
START=$(( NODE_IDX * 2 ))
EXTRA=""
if [ "$NODE_IDX" -gt 0 ]; then EXTRA="--headless --data-parallel-start-rank $START"; fi
docker run -d --name vllm-qwen235 --gpus all --network host --ipc host --privileged \
  --ulimit memlock=-1 --shm-size 64g -v /mnt/models:/mnt/models:ro \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_GID_INDEX=3 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e NCCL_DEBUG=WARN \
  -e NVSHMEM_IB_GID_INDEX=3 -e NVSHMEM_DEBUG=WARN \
  vllm/vllm-openai:v0.26.2 \
  vllm serve /mnt/models/Qwen3-235B-A22B-Instruct-2507-FP8 --served-model-name qwen3-235b \
    --max-model-len 131072 --max-num-batched-tokens 16384 --gpu-memory-utilization 0.9 \
    --tensor-parallel-size 4 --data-parallel-size 8 --data-parallel-size-local 2 \
    --data-parallel-address 10.50.3.11 --data-parallel-rpc-port 13345 \
    --enable-expert-parallel --all2all-backend deepep_low_latency $EXTRA
