#!/bin/bash
# run on hgx-h200-a11 (node_rank 0) and hgx-h200-a12 (node_rank 1, add --headless)
NODE_RANK=${NODE_RANK:-0}
docker run -d --name k3-serve --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  -e NCCL_DEBUG=INFO -e NCCL_DEBUG_SUBSYS=INIT -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9 -v /mnt/models:/mnt/models \
  vllm/vllm-openai:kimi-k3 /mnt/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --nnodes 2 --node-rank ${NODE_RANK} --master-addr 10.52.3.11 --master-port 29533 --gpu-memory-utilization 0.92 \
  --max-model-len 1048576 --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  $( [ "$NODE_RANK" != 0 ] && echo --headless )
