#!/bin/bash
# K3 prod pair -- started by hand from the ops jump host (see runbook RB-114)
# node_rank 0 on gpu-a17 (10.52.0.17), node_rank 1 on gpu-a18 (10.52.0.18)

COMMON_ENV="-e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e UCX_TLS=rc,cuda_copy -e HF_HOME=/models/hf"
COMMON_ARGS="/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --master-addr 10.52.0.17 --master-port 29600 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 262144 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3"

# gpu-a17
ssh gpu-a17 docker run -d --name vllm-k3 --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 $COMMON_ENV -v /data/models:/models \
  vllm/vllm-openai:kimi-k3 $COMMON_ARGS --node-rank 0

# gpu-a18: shared-pool node, container limits per infra policy INF-22 (cpus/memory)
ssh gpu-a18 docker run -d --name vllm-k3 --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --cpus 96 --memory 256g $COMMON_ENV -v /data/models:/models \
  vllm/vllm-openai:kimi-k3 $COMMON_ARGS --node-rank 1 --headless
