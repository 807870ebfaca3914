#!/bin/bash
# run on hgx-r12-n03 (head) and hgx-r12-n04 (worker); image vllm/vllm-openai:v0.11.0
IMG=vllm/vllm-openai:v0.11.0
COMMON="--network host --ipc host --gpus all --shm-size 32g --device /dev/infiniband --ulimit memlock=-1 -v /data/hf:/root/.cache/huggingface"
ENVS="-e GLOO_SOCKET_IFNAME=bond0 -e TP_SOCKET_IFNAME=bond0 -e NCCL_DEBUG=INFO -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"

# head (n03)
docker run -d --name vllm-head $COMMON $ENVS -e VLLM_HOST_IP=10.40.12.3 --entrypoint /bin/bash $IMG \
    -c 'ray start --block --head --port=6379 --node-ip-address=10.40.12.3'
# worker (n04)
docker run -d --name vllm-node $COMMON $ENVS -e VLLM_HOST_IP=10.40.12.4 --entrypoint /bin/bash $IMG \
    -c 'ray start --block --address=10.40.12.3:6379 --node-ip-address=10.40.12.4'

# serve (inside the head container)
docker exec vllm-head bash -c 'vllm serve deepseek-ai/DeepSeek-V3.1 --host 0.0.0.0 --port 8000 --served-model-name dsv31 \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
    --max-model-len 65536 --gpu-memory-utilization 0.9 --trust-remote-code 2>&1 | tee /root/vllm-serve.log'
