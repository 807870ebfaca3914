#!/bin/bash
# launch script used on h200-pod3-b15 (node_rank 0)
docker run -d --name vllm-k3 --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  -e PYTHONFAULTHANDLER=1 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -e NCCL_IB_GID_INDEX=3 -e UCX_TLS=rc,cuda_copy \
  -v /models:/models -e HF_HOME=/models/hf vllm/vllm-openai:kimi-k3 \
  moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 8 --pipeline-parallel-size 3 \
  --nnodes 3 --node-rank 0 --master-addr 10.88.2.71 --master-port 29511 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
