#!/bin/bash
# run on dgx-h-31 (Ray head). Ray workers on dgx-h-32 and dgx-h-33 were started with:
#   ray start --address=10.30.1.31:6379 --num-gpus=8
export GLOO_SOCKET_IFNAME=bond0
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_DEBUG=WARN
export HF_HUB_OFFLINE=1
export RAY_ADDRESS=10.30.1.31:6379
nohup vllm serve /data/models/GLM-4.6-FP8 --served-model-name glm-4.6 \
  --tensor-parallel-size 4 --data-parallel-size 6 --data-parallel-size-local 2 --data-parallel-backend ray \
  --enable-expert-parallel --all2all-backend pplx --max-model-len 131072 --gpu-memory-utilization 0.9 \
  --enable-auto-tool-choice --tool-call-parser glm45 --reasoning-parser glm45 \
  --host 0.0.0.0 > /var/log/vllm/vllm-serve.log 2>&1 &
