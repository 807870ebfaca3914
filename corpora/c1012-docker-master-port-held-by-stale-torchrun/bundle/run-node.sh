#!/usr/bin/env bash
# /opt/deploy/k3/run-node.sh  (same script on both nodes; NODE_RANK=0 on b300-k3-01, 1 on b300-k3-02)
# redeploy 2026-12-02: image bumped to vllm/vllm-openai:kimi-k3 @sha256:5b0c1e97d4f2
set -euo pipefail
NODE_RANK=${NODE_RANK:?}
MASTER=10.40.8.11
docker rm -f vllm-k3 2>/dev/null || true
EXTRA=""
if [ "$NODE_RANK" = "0" ]; then EXTRA="--host 0.0.0.0 --port 8000 --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3"; else EXTRA="--headless"; fi
docker run -d --name vllm-k3 --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband -v /data/hf:/root/.cache/huggingface \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e UCX_TLS=rc,cuda_copy -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --trust-remote-code \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel --all2all-backend deepep_v2 \
    --nnodes 2 --node-rank "$NODE_RANK" --master-addr "$MASTER" --master-port 29511 \
    --max-model-len 1048576 --gpu-memory-utilization 0.90 --enable-prefix-caching \
    --served-model-name kimi-k3 $EXTRA
