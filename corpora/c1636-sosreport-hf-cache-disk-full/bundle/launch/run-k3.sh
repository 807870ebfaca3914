#!/usr/bin/env bash
# usage: run-k3.sh <node_rank>     (0 on gpu-h200-a07, 1 on gpu-h200-a08)
set -euo pipefail
NODE_RANK=${1:?node rank}
HEAD=10.52.3.17
EXTRA=""
if [[ "$NODE_RANK" != "0" ]]; then EXTRA="--headless"; fi

docker rm -f vllm-k3 >/dev/null 2>&1 || true
docker run -d --name vllm-k3 --runtime nvidia --gpus all --ipc=host --network host \
  --shm-size 64g --ulimit memlock=-1 \
  -v /data/hf:/data/hf -e HF_HOME=/data/hf -e HF_TOKEN_PATH=/data/hf/token \
  -e HF_HUB_DISABLE_PROGRESS_BARS=1 \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=eth0 -e GLOO_SOCKET_IFNAME=eth0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --nnodes 2 --node-rank "$NODE_RANK" --master-addr "$HEAD" --master-port 29511 $EXTRA \
    --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
    --enable-prefix-caching --max-model-len 1048576 --trust-remote-code \
    --served-model-name kimi-k3 --enable-auto-tool-choice \
    --tool-call-parser kimi_k3 --reasoning-parser kimi_k3

mkdir -p /var/log/vllm
nohup docker logs -f -t vllm-k3 >> /var/log/vllm/vllm.log 2>&1 &
echo "started vllm-k3 (node_rank=$NODE_RANK), log: /var/log/vllm/vllm.log"
