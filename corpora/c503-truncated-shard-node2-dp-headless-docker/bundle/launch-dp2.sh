#!/bin/bash
# DP=2 x TP=8 (EP=16) over two HGX H100 nodes; weights from the local NVMe copy on each node (/models, synced nightly from NFS)
# head  : hgx-h100-b17 (10.18.0.17)   ./launch-dp2.sh head
# worker: hgx-h100-b18 (10.18.0.18)   ./launch-dp2.sh worker
ROLE=$1
COMMON="--tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 --data-parallel-address 10.18.0.17 \
        --data-parallel-rpc-port 13345 --enable-expert-parallel --max-model-len 65536 --gpu-memory-utilization 0.9 \
        --enable-prefix-caching --served-model-name qwen3-235b"
if [ "$ROLE" = head ]; then EXTRA="--host 0.0.0.0"; else EXTRA="--headless --data-parallel-start-rank 1"; fi
docker run -d --name vllm --gpus all --ipc=host --network=host -v /models:/models -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_SOCKET_IFNAME=bond0 \
  vllm/vllm-openai:v0.10.1.1 /models/Qwen3-235B-A22B-Instruct-2507-FP8 $COMMON $EXTRA
