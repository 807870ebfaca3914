#!/bin/bash
# hgx-h200-08 (Ray worker only)
docker run -d --name k3-ray-worker --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband --cap-add IPC_LOCK \
  -v /data/hf:/root/.cache/huggingface -v /data/vllm-cache:/root/.cache/vllm \
  -e HF_HUB_OFFLINE=1 -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e VLLM_HOST_IP=10.20.4.18 \
  -v /opt/k3/entrypoint.sh:/entrypoint.sh:ro --entrypoint /entrypoint.sh \
  vllm/vllm-openai:kimi-k3 worker 10.20.4.17:6379
