#!/bin/bash
# k3 on gpu-h2-b05 (DP rank 0, API) + gpu-h2-b06 (DP rank 1, headless); weights from the node-local copy in /raid/models
COMMON="--served-model-name kimi-k3 --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.40.3.15 --data-parallel-rpc-port 13345 --enable-expert-parallel --all2all-backend deepep_v2 \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.92 --trust-remote-code \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"
ENVS="-e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e UCX_TLS=rc,cuda_copy -e HF_HUB_OFFLINE=1"
ssh gpu-h2-b05 docker run -d --name vllm-k3 --gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband -v /raid/models:/raid/models:ro $ENVS vllm/vllm-openai:kimi-k3 \
  /raid/models/moonshotai/Kimi-K3 $COMMON
ssh gpu-h2-b06 docker run -d --name vllm-k3 --gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband -v /raid/models:/raid/models:ro $ENVS vllm/vllm-openai:kimi-k3 \
  /raid/models/moonshotai/Kimi-K3 $COMMON --data-parallel-start-rank 1 --headless
