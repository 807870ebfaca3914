#!/bin/bash
# Kimi-K3 "k3-prod-c" pair. Started by hand 2026-11-09 02:10 UTC after the node swap (c03 -> c05).
# gpu-h2-c04 = node_rank 0 (API server on :8000), gpu-h2-c05 = node_rank 1 (--headless)
# same command on both nodes except NODE_RANK / EXTRA
NODE_RANK=${NODE_RANK:-0}
EXTRA=""; [ "$NODE_RANK" != 0 ] && EXTRA="--headless"
docker run -d --name vllm-k3 --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband \
  -v /data/hf-cache:/root/.cache/huggingface \
  -e HF_TOKEN=hf_********************************** \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=eth0 -e GLOO_SOCKET_IFNAME=eth0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e UCX_TLS=rc,cuda_copy \
  -e VLLM_ENGINE_READY_TIMEOUT_S=7200 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank "$NODE_RANK" \
  --master-addr 10.61.2.4 --master-port 29500 $EXTRA \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
