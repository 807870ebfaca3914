#!/bin/bash
# ray cluster: head on the first node, workers join with `ray start --address=10.31.8.104:6379 --num-gpus=8`
source /opt/venvs/vllm/bin/activate
export NCCL_SOCKET_IFNAME=enp170s0f0np0 GLOO_SOCKET_IFNAME=enp170s0f0np0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
nvidia-smi --query-gpu=index,pci.bus_id,uuid,serial --format=csv > gpu-inventory.csv   # also run on every node by pdsh
nohup vllm serve /lustre/models/Kimi-K2-Instruct-0905 --served-model-name kimi-k2 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 3 \
  --max-model-len 131072 --gpu-memory-utilization 0.9 --port 8100 \
  --enable-auto-tool-choice --tool-call-parser kimi_k2 > vllm-serve.log 2>&1 &
