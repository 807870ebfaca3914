#!/bin/bash
# K3 on two HGX B300 boxes. flags taken from the K3 runbook (GB300 NVL72 section)
set -e
IMG=vllm/vllm-openai:kimi-k3
HEAD_IP=172.16.40.7
COMMON="--model moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 1048576 --gpu-memory-utilization 0.92 --kv-cache-dtype fp8 --enable-prefix-caching"
DOCKER="docker run -d --name vllm --gpus all --ipc=host --network host --privileged \
  --ulimit memlock=-1 --device /dev/infiniband -e UCX_TLS=rc,cuda_copy -e NCCL_DEBUG=INFO \
  -e NCCL_SOCKET_IFNAME=bond0 -v /data/hf:/root/.cache/huggingface $IMG"

ssh b300-ib-07 "$DOCKER $COMMON --enable-auto-tool-choice --tool-call-parser kimi_k2 --reasoning-parser kimi_k2"
ssh b300-ib-08 "$DOCKER $COMMON --data-parallel-start-rank 1 --headless"
