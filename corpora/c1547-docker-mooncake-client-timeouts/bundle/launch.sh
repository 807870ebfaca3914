#!/bin/bash
# inf-a01 (prefill) -- GPUs 0,1
docker run -d --name vllm-prefill --gpus '"device=0,1"' --network host --ipc host \
  --device /dev/infiniband --cap-add IPC_LOCK --ulimit memlock=-1 \
  -v /data/hf:/root/.cache/huggingface \
  -e VLLM_MOONCAKE_BOOTSTRAP_PORT=8998 -e VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=120 \
  vllm/vllm-openai:v0.27.1 Qwen/Qwen3-32B --port 8100 --tensor-parallel-size 2 --max-model-len 40960 \
  --gpu-memory-utilization 0.88 --max-num-batched-tokens 16384 --enable-prefix-caching --disable-uvicorn-access-log \
  --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_producer","engine_id":"p-inf-a01-0"}'

# inf-a02 (decode) -- GPUs 0,1
docker run -d --name vllm-decode --gpus '"device=0,1"' --network host --ipc host \
  --device /dev/infiniband --cap-add IPC_LOCK --ulimit memlock=-1 \
  -v /data/hf:/root/.cache/huggingface \
  -e VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT=120 \
  vllm/vllm-openai:v0.27.1 Qwen/Qwen3-32B --port 8200 --tensor-parallel-size 2 --max-model-len 40960 \
  --gpu-memory-utilization 0.88 --max-num-batched-tokens 8192 --enable-prefix-caching --disable-uvicorn-access-log \
  --kv-transfer-config '{"kv_connector":"MooncakeConnector","kv_role":"kv_consumer","engine_id":"d-inf-a02-0"}'

# inf-lb01 (proxy)
docker run -d --name pd-proxy --network host registry.local/ml/pd-proxy:2026.11 \
  --prefill http://10.30.4.11:8100 --prefill-bootstrap http://10.30.4.11:8998 --decode http://10.30.4.12:8200 --port 8000
