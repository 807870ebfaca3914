# launch commands as run on 2026-11-18 (from shell history)

# --- hgx-b3-p01 (prefill) ---
docker run -d --name vllm-k3-prefill --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband --cap-add IPC_LOCK -v /models/hf:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e VLLM_HOST_IP=10.52.8.11 \
  -e VLLM_MOONCAKE_BOOTSTRAP_PORT=8998 -e VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=120 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --served-model-name kimi-k3 --port 8100 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --max-num-batched-tokens 32768 --trust-remote-code \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer","kv_load_failure_policy":"fail","kv_connector_extra_config":{"mooncake_protocol":"rdma","num_workers":10}}'

# --- hgx-b3-d01 (decode 0) ---
docker run -d --name vllm-k3-decode --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband --cap-add IPC_LOCK -v /models/hf:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e VLLM_HOST_IP=10.52.8.21 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --served-model-name kimi-k3 --port 8200 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --trust-remote-code \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_consumer","kv_load_failure_policy":"fail","kv_connector_extra_config":{"mooncake_protocol":"rdma","num_workers":10}}'

# --- hgx-b3-d02 (decode 1) ---
docker run -d --name vllm-k3-decode --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband --cap-add IPC_LOCK -v /models/hf:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 \
  -e NCCL_DEBUG=INFO -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e VLLM_HOST_IP=10.52.8.22 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --served-model-name kimi-k3 --port 8200 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --trust-remote-code \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_consumer","kv_load_failure_policy":"fail","kv_connector_extra_config":{"mooncake_protocol":"rdma","num_workers":10}}'

# --- proxy, on hgx-b3-p01 ---
docker run -d --name pd-proxy -p 8000:8000 -v /opt/pd:/opt/pd python:3.12-slim-httpx \
  python3 /opt/pd/mooncake_connector_proxy.py --host 0.0.0.0 --port 8000 \
  --prefill http://10.52.8.11:8100 8998 --decode http://10.52.8.21:8200 --decode http://10.52.8.22:8200
