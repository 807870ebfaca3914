#!/bin/bash
# started on both nodes by hand (tmux) on 2026-09-09 ~07:40 UTC
# hgx-h100-17: NODE_RANK=0 ; hgx-h100-18: NODE_RANK=1 EXTRA=--headless
NODE_RANK=${NODE_RANK:-0}
docker run -d --name vllm-dsv31 --gpus all --ipc=host --network host --shm-size 32g \
  --ulimit memlock=-1 --device /dev/infiniband \
  -e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e NCCL_IB_GID_INDEX=3 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e VLLM_LOG_STATS_INTERVAL=30 \
  -v /data/hf:/root/.cache/huggingface \
  vllm/vllm-openai:v0.26.0 deepseek-ai/DeepSeek-V3.1 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank $NODE_RANK \
  --master-addr 10.60.1.17 --master-port 29550 --max-model-len 131072 --gpu-memory-utilization 0.92 \
  --enable-prefix-caching --served-model-name deepseek-v3.1 --disable-uvicorn-access-log $EXTRA
# logs collected with: docker logs -t vllm-dsv31 > docker-logs-vllm.txt 2>&1
