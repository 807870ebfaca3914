#!/bin/bash
# /opt/k3/run-vllm.sh on gpu-b300-n18 (started by hand from the admin shell, 2026-12-03 10:14 CET)
podman run -d --name vllm-k3 --replace \
  --device nvidia.com/gpu=all --security-opt=label=disable \
  --network host --ipc host --ulimit memlock=-1 --shm-size 64g \
  -v /srv/models:/models:ro \
  -v /srv/vllm-cache:/root/.cache/vllm \
  -e NCCL_SOCKET_IFNAME=enp27s0np0 -e GLOO_SOCKET_IFNAME=enp27s0np0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e UCX_TLS=rc,cuda_copy -e VLLM_ENGINE_READY_TIMEOUT_S=1800 \
  docker.io/vllm/vllm-openai:kimi-k3 \
  /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address 10.88.4.17 --data-parallel-rpc-port 13345 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend deepep_v2 \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.9 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --data-parallel-start-rank 1 --headless
