#!/bin/bash
# node-rank 0 (API server)
docker run -d --name dsv31 --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband \
  -v /data/models:/data/models -v /data/cache/vllm:/root/.cache/vllm \
  -e VLLM_HOST_IP=10.18.4.6 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  vllm/vllm-openai:v0.24.2 \
  /data/models/DeepSeek-V3.1 --served-model-name dsv31 --trust-remote-code \
  --tensor-parallel-size 16 --nnodes 2 --node-rank 0 --master-addr 10.18.4.6 --master-port 29510 \
  --max-model-len 131072 --gpu-memory-utilization 0.9 --max-num-seqs 96 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser deepseek_v31 --host 0.0.0.0
