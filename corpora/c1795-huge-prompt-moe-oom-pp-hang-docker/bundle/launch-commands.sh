# k3-prod-b  (change CHG-40112, 2026-11-16): Kimi K3, TP8 x PP2 over b300-c7-n03 / b300-c7-n04
# 2026-11-16: raised --max-num-batched-tokens 8192 -> 32768 and --gpu-memory-utilization 0.90 -> 0.93
#             (long-document tenant complained about 1M-token prefill time; INC-2291)
# 2026-11-16: VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=1800 because 32k-token chunks at ~900k context tripped the 300 s default once

### b300-c7-n03 (node_rank 0, API server)
docker run -d --name vllm-k3 --gpus all --ipc=host --network=host --shm-size=64g --ulimit memlock=-1 \
  -e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e UCX_TLS=rc,cuda_copy \
  -e VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=1800 \
  -e TORCH_NCCL_TRACE_BUFFER_SIZE=4000 -e TORCH_NCCL_DUMP_ON_TIMEOUT=1 \
  -e TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/var/log/vllm/fr/nccl_trace_rank_ \
  -v /srv/models:/models:ro -v /var/log/vllm:/var/log/vllm \
  vllm/vllm-openai:kimi-k3 /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 10.61.7.3 --master-port 29611 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --max-num-batched-tokens 32768 --gpu-memory-utilization 0.93 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --port 8000

### b300-c7-n04 (node_rank 1, headless)
docker run -d --name vllm-k3-worker --gpus all --ipc=host --network=host --shm-size=64g --ulimit memlock=-1 \
  -e NCCL_DEBUG=WARN -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e UCX_TLS=rc,cuda_copy \
  -e VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=1800 \
  -e TORCH_NCCL_TRACE_BUFFER_SIZE=4000 -e TORCH_NCCL_DUMP_ON_TIMEOUT=1 \
  -e TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/var/log/vllm/fr/nccl_trace_rank_ \
  -v /srv/models:/models:ro -v /var/log/vllm:/var/log/vllm \
  vllm/vllm-openai:kimi-k3 /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 1 --master-addr 10.61.7.3 --master-port 29611 --headless \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --max-num-batched-tokens 32768 --gpu-memory-utilization 0.93 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3

# image: vllm/vllm-openai:kimi-k3@sha256:5e0c1f9a7d22b6c41e83a0f4d7b19e2c6a58f3d0b7c94e1a2f6d8b3c5e7a9f01 (same digest on both hosts)
# vllm 0.27.2, torch 2.10.0+cu130, nccl 2.28.7; host driver 580.105.08
