#!/bin/bash
# Kimi K3, 2 x HGX B300 (8 GPUs each), TP8 x PP2, multiprocessing backend across nodes.
# Run on b300-sjc-15 first (headless), then on b300-sjc-14.  Image pulled 2026-12-05.
IMG=vllm/vllm-openai:kimi-k3@sha256:4be0c1d27f9a8e3356b1d0c7e2a95f13c6d84e0b2f71a9c3d5e8b6f0a1c2d3e4
COMMON="--runtime nvidia --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  -v /srv/models:/models -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 \
  -e NCCL_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_DEBUG=WARN -e UCX_TLS=rc,cuda_copy -e VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1)"
ARGS="moonshotai/Kimi-K3 --trust-remote-code --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --gpu-memory-utilization 0.92 --served-model-name kimi-k3 \
  --nnodes 2 --master-addr 172.24.9.14 --master-port 29531"

case "$(hostname -s)" in
  b300-sjc-14)
    docker run -d --name vllm-k3 $COMMON $IMG $ARGS --node-rank 0 --host 0.0.0.0 \
      --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 ;;
  b300-sjc-15)
    docker run -d --name vllm-k3 $COMMON $IMG $ARGS --node-rank 1 --headless ;;
esac
