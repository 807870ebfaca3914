#!/usr/bin/env bash
# k3-sjc: Kimi K3 on 4 x 8 H200 (sjc pool), Ray executor, PP=4 x TP=8.
# Step 1 (ansible play k3-ray-up.yml, run on every host in group [k3_sjc]):
#   head  = sjc-h200-021, workers = the other three hosts of the group
set -euo pipefail
IMAGE=vllm/vllm-openai:kimi-k3
HEAD_IP=10.48.2.21
COMMON=(--gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 --ulimit stack=67108864
        -v /raid/models:/raid/models:ro -v /raid/cache:/root/.cache
        -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
        -e HF_HUB_OFFLINE=1 -e NO_COLOR=1 -e RAY_ADDRESS=${HEAD_IP}:6379)

if [[ "$(hostname -s)" == "sjc-h200-021" ]]; then
  docker run -d --name k3-ray "${COMMON[@]}" --entrypoint ray $IMAGE start --head --node-ip-address ${HEAD_IP} --port 6379 --dashboard-host 0.0.0.0 --block
else
  MYIP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1)
  docker run -d --name k3-ray "${COMMON[@]}" --entrypoint ray $IMAGE start --address ${HEAD_IP}:6379 --node-ip-address ${MYIP} --block
fi

# Step 2 (on sjc-h200-021, once `ray status` shows 4 nodes / 32 GPU):
# docker exec k3-ray vllm serve /raid/models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
#   --tensor-parallel-size 8 --pipeline-parallel-size 4 --distributed-executor-backend ray \
#   --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
#   --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 \
#   --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
#   2>&1 | tee /var/log/k3/vllm-serve-20261006T1405Z.log
