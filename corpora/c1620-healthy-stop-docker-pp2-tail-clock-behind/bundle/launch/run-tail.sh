#!/bin/bash
# /opt/k3/run-tail.sh on gpu-a02 (node rank 1: headless, PP stage 1)
docker run -d --name k3-tail --restart no \
  --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9 -e NCCL_IB_GID_INDEX=3 \
  -e UCX_TLS=rc,cuda_copy \
  -e VLLM_HOST_IP=10.60.1.12 -e VLLM_LOG_STATS_INTERVAL=30 \
  -v /data/models:/models:ro -v /data/vllm-cache:/root/.cache/vllm \
  vllm/vllm-openai:kimi-k3 \
  /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.90 \
  --disable-uvicorn-access-log --shutdown-timeout 15 \
  --nnodes 2 --node-rank 1 --master-addr 10.60.1.11 --master-port 29511 --headless
