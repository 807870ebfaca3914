#!/bin/bash
# run on both nodes; NODE_RANK=0 on k3-gpu-c07, 1 on k3-gpu-c08
IMG=vllm/vllm-openai:kimi-k3
EXTRA=""
[ "$NODE_RANK" = "1" ] && EXTRA="--headless --data-parallel-start-rank 1"
docker run -d --name k3 --gpus all --ipc=host --network host --privileged --ulimit memlock=-1 \
  -v /data/models:/root/.cache/huggingface -v /var/log/nccl:/var/log/nccl \
  -e NCCL_DEBUG=INFO -e NCCL_DEBUG_SUBSYS=INIT,NET -e 'NCCL_DEBUG_FILE=/var/log/nccl/nccl.%h.%p.log' \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e UCX_TLS=rc,cuda_copy -e VLLM_ALL2ALL_BACKEND=deepep_v2 \
  $IMG moonshotai/Kimi-K3 --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.61.4.17 --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 524288 --gpu-memory-utilization 0.9 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 $EXTRA
