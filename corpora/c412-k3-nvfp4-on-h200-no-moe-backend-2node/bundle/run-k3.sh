#!/bin/bash
# node rank 0 on h200-ib-11, 1 on h200-ib-12 (headless); copied from the GB300 runbook, checkpoint switched to NVFP4 to fit 16 x H200
docker run -d --name k3 --gpus all --ipc=host --network=host --privileged -v /models:/root/.cache/huggingface \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_10,mlx5_11 -e UCX_TLS=rc,cuda_copy \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3-NVFP4 --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-address 10.70.1.11 \
  --data-parallel-rpc-port 13345 $EXTRA --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 262144 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
