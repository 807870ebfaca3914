#!/bin/bash
# DP rank 0 (API server) of Kimi K3 on hgx-h200-21. DP rank 1 runs headless on hgx-h200-22 (systemd unit k3-dp1).
set -x
exec docker run --rm -it --name k3-dp0 --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /raid/models:/models -v /raid/cache:/root/.cache \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e UCX_TLS=rc,cuda_copy \
  -e VLLM_ENGINE_READY_TIMEOUT_S=3600 -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-address 10.70.2.21 --data-parallel-rpc-port 13345 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend deepep_v2 \
  --enable-prefix-caching --max-model-len 1048576 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --port 8000
