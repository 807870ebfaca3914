#!/bin/bash
# run on 10.12.0.35 (ad hoc, by hand)
docker run -d --name k3-ray-head --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 -v /data/models:/models \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e VLLM_HOST_IP=10.12.0.35 -e HF_HUB_OFFLINE=1 \
  --entrypoint bash vllm/vllm-openai:kimi-k3 \
  -c "ray start --head --port 6379 --node-ip-address 10.12.0.35 --dashboard-host 127.0.0.1 --block"
