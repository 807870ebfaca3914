#!/bin/bash
# gpu-h200-p14 (Ray worker), same image and env as the head
set -euo pipefail
docker run -d --name k3-ray-worker --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 -v /mnt/models:/models:ro -v /var/log/k3:/var/log/k3 \
  -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  --entrypoint /bin/bash vllm/vllm-openai:kimi-k3 -c 'sleep infinity'
docker exec k3-ray-worker ray start --address=10.52.4.21:6379 --num-gpus=8 --disable-usage-stats > /var/log/k3/ray-start.log 2>&1
