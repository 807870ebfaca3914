#!/bin/bash
# same script on both GPU boxes; NODE_RANK=0 on the API box, 1 (+ --headless) on the other
docker run -d --name vllm-dsv31 --runtime nvidia --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --cap-add IPC_LOCK --device /dev/infiniband \
  -v /mnt/models:/models:ro -v /var/cache/vllm:/root/.cache/vllm \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1) -e RDMA_WATCH=1 \
  registry.corp.example/inference/vllm:0.21.0-cu129-rdma1 \
  serve /models/DeepSeek-V3.1-Terminus --served-model-name dsv31 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --nnodes 2 --node-rank ${NODE_RANK} --master-addr 10.41.8.13 --master-port 29511 \
  --max-model-len 131072 --gpu-memory-utilization 0.92 --enable-prefix-caching \
  --disable-log-stats --disable-uvicorn-access-log ${EXTRA_ARGS}

# /opt/entry/run.sh in the image: starts rdma-watch.sh in the background when RDMA_WATCH=1
# (polls /sys/class/infiniband/*/ports/1/{state,phys_state} every 2 s and prints changes), then exec "$@"
