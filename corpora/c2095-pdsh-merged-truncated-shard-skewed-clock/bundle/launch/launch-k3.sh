#!/bin/bash
# /opt/k3/launch-k3.sh -- started on both nodes from mgmt01 with:
#   pdsh -R ssh -w gpu-b[07-08] /opt/k3/launch-k3.sh 2>&1 | tee /scratch/ops/pdsh-k3-launch-20261118.log
set -euo pipefail
HEAD=10.52.8.7
case "$(hostname -s)" in
  gpu-b07) RANK=0; EXTRA="" ;;
  gpu-b08) RANK=1; EXTRA="--headless" ;;
  *) echo "unknown node"; exit 2 ;;
esac
exec docker run --rm --name vllm-k3 --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e UCX_TLS=rc,cuda_copy -e HF_HUB_OFFLINE=1 \
  -v /nvme/models:/models:ro \
  vllm/vllm-openai:kimi-k3 \
  /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 2 --node-rank $RANK --master-addr $HEAD --master-port 29511 $EXTRA \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.92 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
