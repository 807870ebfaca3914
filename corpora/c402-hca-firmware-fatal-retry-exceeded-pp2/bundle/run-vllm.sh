#!/bin/bash
# same script on both nodes; NODE_RANK=0 on b200-ib-r3-05, 1 on b200-ib-r3-06
docker run -d --name vllm --gpus all --ipc=host --network=host --privileged \
  -v /data/hf:/root/.cache/huggingface \
  -e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_TIMEOUT=20 -e NCCL_IB_RETRY_CNT=7 \
  vllm/vllm-openai:v0.15.1 \
  bash -c "vllm serve deepseek-ai/DeepSeek-V3.2 --trust-remote-code --served-model-name dsv32 --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --nnodes 2 --node-rank $NODE_RANK --master-addr 10.61.3.5 $( [ $NODE_RANK = 1 ] && echo --headless ) \
    --max-model-len 131072 --gpu-memory-utilization 0.9 --enable-prefix-caching 2>&1 | tee /logs/vllm-serve.log"
