#!/bin/bash
# /opt/k3/start-worker.sh on h200-r3-n06 (written for the new second node, 2026-11-30)
docker rm -f vllm-k3-worker 2>/dev/null
docker run -d --name vllm-k3-worker --gpus all --network host --ulimit memlock=-1 \
  -v /raid/models:/models:ro \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=ens21f0np0 -e GLOO_SOCKET_IFNAME=ens21f0np0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -e UCX_TLS=rc,cuda_copy \
  vllm/vllm-openai:kimi-k3 /models/Kimi-K3 --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 1 --master-addr 10.31.8.105 --master-port 29511 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --max-model-len 262144 \
  --enable-prefix-caching --headless
