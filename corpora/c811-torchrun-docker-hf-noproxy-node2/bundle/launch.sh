#!/bin/bash
# run from the bastion: pdsh -w h100-n[21-22] /opt/jobs/launch.sh
set -euo pipefail
NODE_RANK=$([ "$(hostname -s)" = h100-n21 ] && echo 0 || echo 1)
docker rm -f qwen235-batch 2>/dev/null || true
docker run -d --name qwen235-batch --gpus all --network host --ipc host --ulimit memlock=-1 \
  -e HF_HOME=/data/hf -e HTTPS_PROXY -e HTTP_PROXY -e NO_PROXY \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5 -e VLLM_HOST_IP=$(hostname -i | awk '{print $1}') -e OMP_NUM_THREADS=8 \
  -v /data/hf:/data/hf -v /data/prompts:/data/prompts:ro -v /data/out:/data/out -v /opt/jobs/batch_infer.py:/workspace/batch_infer.py:ro \
  --entrypoint torchrun vllm/vllm-openai:v0.11.2 \
  --nnodes 2 --nproc-per-node 8 --node-rank $NODE_RANK --rdzv-backend c10d --rdzv-endpoint 10.40.1.21:29400 --rdzv-id qwen235-batch-1126 \
  /workspace/batch_infer.py --input /data/prompts/eval-1126.jsonl --output /data/out/eval-1126
