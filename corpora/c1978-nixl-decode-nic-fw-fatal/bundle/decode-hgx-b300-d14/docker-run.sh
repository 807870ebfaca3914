#!/bin/bash
# k3 P/D - decode instance on hgx-b300-d14 (started 2026-11-17 13:02 UTC)
docker run -d --name k3-decode --gpus all --network host --ipc host --privileged \
  --ulimit memlock=-1 --shm-size 64g \
  -v /raid/hf:/root/.cache/huggingface -v /raid/vllm-cache:/root/.cache/vllm \
  --device /dev/infiniband \
  -e HF_HUB_OFFLINE=1 \
  -e VLLM_NIXL_SIDE_CHANNEL_HOST=10.72.3.14 -e VLLM_NIXL_SIDE_CHANNEL_PORT=5600 \
  -e UCX_TLS=rc,cuda_copy -e UCX_NET_DEVICES=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1 \
  -e VLLM_LOG_STATS_INTERVAL=30 -e NCCL_DEBUG=WARN \
  vllm/vllm-openai:kimi-k3 \
  moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --host 0.0.0.0 --port 8200 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 262144 --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both","kv_load_failure_policy":"fail","kv_connector_extra_config":{"backends":["UCX"]}}'
