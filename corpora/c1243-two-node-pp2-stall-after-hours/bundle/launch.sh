#!/usr/bin/env bash
# deepseek-v3.1 on two HGX H100 nodes: node rank 0 = hgx-b07 (API), node rank 1 = hgx-b11 (headless)
NODE_RANK=${NODE_RANK:?}
EXTRA=""; [ "$NODE_RANK" != "0" ] && EXTRA="--headless"
docker run -d --name vllm-node${NODE_RANK} --gpus all --network host --ipc host \
  --ulimit memlock=-1 --device /dev/infiniband \
  -v /raid/models:/models:ro -v /raid/vllm-cache:/root/.cache \
  -e CUDA_DEVICE_ORDER=PCI_BUS_ID \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  vllm/vllm-openai:v0.23.1 \
  /models/DeepSeek-V3.1 --served-model-name deepseek-v3.1 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 2 --node-rank ${NODE_RANK} --master-addr 10.61.4.7 --master-port 29501 \
  --max-model-len 32768 --gpu-memory-utilization 0.92 --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser deepseek_v31 ${EXTRA}
