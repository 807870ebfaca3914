#!/bin/bash
# /opt/k3/run-leader.sh on h200-r3-n05
docker rm -f vllm-k3 2>/dev/null
docker run -d --name vllm-k3 --gpus all --ipc=host --network host --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /raid/models:/models:ro \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=ens21f0np0 -e GLOO_SOCKET_IFNAME=ens21f0np0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -e UCX_TLS=rc,cuda_copy \
  vllm/vllm-openai:kimi-k3 /models/Kimi-K3 --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 10.31.8.105 --master-port 29511 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --max-model-len 262144 --gpu-memory-utilization 0.9 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
