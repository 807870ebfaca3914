#!/bin/bash
# run on both hosts; NODE_RANK=0 on gpu-h200-p01, 1 on gpu-h200-p02
NODE_RANK=${NODE_RANK:?}
EXTRA=""; [ "$NODE_RANK" = "1" ] && EXTRA="--headless"
docker run -d --name vllm --gpus all --network host --ipc host --ulimit memlock=-1 \
  --device /dev/infiniband/uverbs0 --device /dev/infiniband/uverbs1 --device /dev/infiniband/uverbs2 --device /dev/infiniband/uverbs3 \
  --device /dev/infiniband/uverbs4 --device /dev/infiniband/uverbs5 --device /dev/infiniband/uverbs6 --device /dev/infiniband/uverbs7 \
  --device /dev/infiniband/rdma_cm --cap-add IPC_LOCK \
  -v /models:/models:ro -v /var/log/nccl:/var/log/nccl \
  -e NCCL_DEBUG=INFO -e NCCL_DEBUG_SUBSYS=INIT,NET,ENV -e NCCL_DEBUG_FILE=/var/log/nccl/nccl.%h.%p.log \
  -e NCCL_IB_HCA=mlx5 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_CUMEM_ENABLE=0 \
  vllm/vllm-openai:v0.11.2 /models/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank $NODE_RANK \
  --master-addr 10.60.1.21 --master-port 29600 --max-model-len 131072 --gpu-memory-utilization 0.9 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser hermes --host 0.0.0.0 --port 8000 $EXTRA
