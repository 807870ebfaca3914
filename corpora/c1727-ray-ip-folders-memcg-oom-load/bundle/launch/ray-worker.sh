#!/bin/bash
# rendered by ansible role gpu-worker (roles/gpu-worker/templates/ray-worker.sh.j2), host group [b200_workers]
# do not edit by hand
docker run -d --name k3-ray-worker --gpus all --network host --ipc host --shm-size 64g \
  --memory 640g --memory-swap 640g \
  --ulimit memlock=-1 --ulimit stack=67108864 -v /data/models:/models \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e VLLM_HOST_IP=10.12.0.37 -e HF_HUB_OFFLINE=1 \
  -e RAY_memory_monitor_refresh_ms=0 \
  --entrypoint bash vllm/vllm-openai:kimi-k3 \
  -c "ray start --address 10.12.0.35:6379 --node-ip-address 10.12.0.37 --block"
