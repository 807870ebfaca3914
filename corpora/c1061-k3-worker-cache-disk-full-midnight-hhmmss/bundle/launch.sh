#!/bin/bash
# deployed by ansible (role k3-serving) on both nodes; NODE_RANK=0 on b300-lon-11, 1 on b300-lon-12
EXTRA=""
[ "$NODE_RANK" = 0 ] && EXTRA="--host 0.0.0.0 --port 8000" || EXTRA="--headless"
docker rm -f k3-$ROLE 2>/dev/null
docker run -d --name k3-$ROLE --gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband -v /data/hf:/root/.cache/huggingface -v /etc/vllm/logging.json:/etc/vllm/logging.json:ro \
  -e VLLM_LOGGING_CONFIG_PATH=/etc/vllm/logging.json -e HF_HOME=/root/.cache/huggingface \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e UCX_TLS=rc,cuda_copy \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 16 --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 524288 --gpu-memory-utilization 0.9 \
  --nnodes 2 --node-rank $NODE_RANK --master-addr 10.61.4.11 --master-port 29511 $EXTRA
