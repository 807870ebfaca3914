#!/bin/bash
# gpu-h200-p11 (Ray head). Started by ops on 2026-10-14 after the PP2 re-shard of Kimi-K3.
set -euo pipefail
docker run -d --name k3-ray-head --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 -v /mnt/models:/models:ro -v /var/log/k3:/var/log/k3 \
  -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  --entrypoint /bin/bash vllm/vllm-openai:kimi-k3 -c 'sleep infinity'
docker exec k3-ray-head ray start --head --port=6379 --num-gpus=8 --dashboard-host=127.0.0.1 --disable-usage-stats > /var/log/k3/ray-start.log 2>&1
# wait for gpu-h200-p14 to join (ray status shows 16 GPU), then:
docker exec -d k3-ray-head bash -c 'vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 262144 --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  > /var/log/k3/vllm-serve.log 2>&1'
