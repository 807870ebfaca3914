#!/usr/bin/env bash
# run-vllm.sh NODE_RANK  -- started by hand on each of the three nodes (see inventory sheet)
set -euo pipefail
NODE_RANK=${1:?node rank}
HEAD=10.42.7.17
EXTRA="--headless"
if [[ $NODE_RANK == 0 ]]; then EXTRA="--host 0.0.0.0 --port 8000 --disable-uvicorn-access-log"; fi
docker rm -f vllm-n${NODE_RANK} 2>/dev/null || true
docker run -d --name vllm-n${NODE_RANK} --runtime nvidia --gpus all \
  --network host --ipc host --shm-size 64g --cap-add IPC_LOCK --ulimit memlock=-1 \
  --device /dev/infiniband \
  -v /data/models:/models:ro -v /data/vllm-cache:/root/.cache/vllm \
  -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 -e CUDA_DEVICE_ORDER=PCI_BUS_ID -e VLLM_LOG_STATS_INTERVAL=60 \
  -e VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1) \
  -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_SOCKET_IFNAME=bond0 -e NCCL_IB_GID_INDEX=3 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  vllm/vllm-openai:v0.11.2 \
  --model meta-llama/Llama-3.1-405B-Instruct --served-model-name llama-405b \
  --tensor-parallel-size 8 --pipeline-parallel-size 3 --max-model-len 32768 \
  --gpu-memory-utilization 0.92 --enable-prefix-caching --max-num-seqs 128 \
  --nnodes 3 --node-rank ${NODE_RANK} --master-addr ${HEAD} --master-port 29500 ${EXTRA}
