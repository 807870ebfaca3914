#!/bin/bash
# launch-head.sh - node_rank 0 (API server), the host behind llm-k3-api.internal
docker run -d --name vllm-k3 --runtime nvidia --gpus all --network host --ipc host \
  --ulimit memlock=-1 --ulimit stack=67108864 --cap-add IPC_LOCK --device /dev/infiniband \
  -v /data/models:/models:ro -v /data/vllm-cache:/root/.cache/vllm \
  -e HF_HUB_OFFLINE=1 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e UCX_TLS=rc,cuda_copy \
  vllm/vllm-openai:kimi-k3 /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 524288 --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --nnodes 2 --node-rank 0 --master-addr 10.92.4.51 --master-port 29555 --host 0.0.0.0 --port 8000
