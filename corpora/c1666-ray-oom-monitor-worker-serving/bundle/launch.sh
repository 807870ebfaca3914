#!/bin/bash
# K3 serving, 2x HGX H200 (gx-h200-017 head, gx-h200-018 worker), Ray cluster in docker, vllm serve via docker exec on the head
# image: vllm/vllm-openai:kimi-k3 (sha256:4f1d0c9b...; vLLM 0.27.2, torch 2.10.0+cu130, ray 2.52.1)

COMMON="--runtime nvidia --gpus all --network host --ipc host --shm-size 256g --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /models:/models -e HF_HOME=/models/hf -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e VLLM_LOG_STATS_INTERVAL=30"

# on gx-h200-017
docker run -d --name k3-ray-head $COMMON -e VLLM_HOST_IP=10.44.12.17 vllm/vllm-openai:kimi-k3 \
  ray start --head --node-ip-address 10.44.12.17 --port 6379 --dashboard-host 0.0.0.0 --num-gpus 8 --block
# on gx-h200-018
docker run -d --name k3-ray-worker $COMMON -e VLLM_HOST_IP=10.44.12.18 vllm/vllm-openai:kimi-k3 \
  ray start --address 10.44.12.17:6379 --node-ip-address 10.44.12.18 --num-gpus 8 --block

# then, on gx-h200-017 (output tee'd to /var/log/k3/vllm-serve.log)
docker exec k3-ray-head vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 262144 --max-num-seqs 128 --gpu-memory-utilization 0.92 --host 0.0.0.0 --port 8000 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 2>&1 | tee /var/log/k3/vllm-serve.log
