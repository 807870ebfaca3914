# hgx-b300-17 (prefill) - started 2026-11-03 09:41 CST
podman run -d --name k3-prefill --network host --ipc host --device nvidia.com/gpu=all \
  --device /dev/infiniband --ulimit memlock=-1 --cap-add IPC_LOCK \
  -v /data/hf:/root/.cache/huggingface:ro -e HF_HUB_OFFLINE=1 -e TZ=UTC \
  -e VLLM_MOONCAKE_BOOTSTRAP_PORT=8998 -e MC_GID_INDEX=3 \
  registry.lab.local/ml/vllm-openai:kimi-k3-mooncake-20261028 \
  vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
    --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
    --max-model-len 262144 --max-num-batched-tokens 16384 --gpu-memory-utilization 0.90 --enable-prefix-caching \
    --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2 --disable-uvicorn-access-log --port 8100 \
    --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer","kv_connector_extra_config":{"mooncake_protocol":"rdma"}}'

# hgx-b300-18 (decode)
podman run -d --name k3-decode --network host --ipc host --device nvidia.com/gpu=all \
  --device /dev/infiniband --ulimit memlock=-1 --cap-add IPC_LOCK \
  -v /data/hf:/root/.cache/huggingface:ro -e HF_HUB_OFFLINE=1 -e TZ=UTC \
  -e VLLM_MOONCAKE_BOOTSTRAP_PORT=8998 -e MC_GID_INDEX=3 \
  registry.lab.local/ml/vllm-openai:kimi-k3-mooncake-20261028 \
  vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
    --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
    --max-model-len 262144 --max-num-seqs 128 --gpu-memory-utilization 0.90 --enable-prefix-caching \
    --tool-call-parser kimi_k2 --enable-auto-tool-choice --reasoning-parser kimi_k2 --disable-uvicorn-access-log --port 8200 \
    --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_consumer","kv_connector_extra_config":{"mooncake_protocol":"rdma"}}'

# hgx-b300-17: proxy
podman run -d --name k3-pd-proxy --network host registry.lab.local/ml/pd-proxy:1.2 --port 8000 \
  --prefill http://10.60.2.17:8100 --decode http://10.60.2.18:8200 --bootstrap-port 8998

# image: FROM vllm/vllm-openai:kimi-k3 (vLLM 0.28.1, torch 2.10.0+cu130) + mooncake-transfer-engine-cuda13 0.3.9
