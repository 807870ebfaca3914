#1793030320
nvidia-smi --query-gpu=index,name,memory.used --format=csv
#1793030451
podman images | grep kimi
#1793030471
podman run -d --name k3-dev-a --device nvidia.com/gpu=all --ipc=host --network host --shm-size 64g -e NO_COLOR=1 -e HF_HUB_OFFLINE=1 -v /data/models:/models:ro -v /data/cache/vllm:/root/.cache/vllm docker.io/vllm/vllm-openai:kimi-k3 /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 262144 --port 8000
#1793030490
podman logs -f --tail 30 k3-dev-a
#1793031241
curl -s localhost:8000/v1/models | jq .
#1793035758
podman logs --since 30m k3-dev-a | grep -c '" 400 '
#1793035899
curl -s localhost:8000/metrics | grep -E 'request_success|prompt_tokens_total'
#1793035925
podman stop k3-dev-a
#1793036025
podman run -d --name k3-dev-b --device nvidia.com/gpu=all --ipc=host --network host --shm-size 64g -e NO_COLOR=1 -e HF_HUB_OFFLINE=1 -v /data/models:/models:ro -v /data/cache/vllm:/root/.cache/vllm docker.io/vllm/vllm-openai:kimi-k3 /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 262144 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --port 8000
#1793036042
podman logs -f --tail 30 k3-dev-b
#1793036780
curl -s localhost:8000/v1/models | jq .
#1793041829
podman ps
#1793041863
podman logs --since 10m k3-dev-b | tail -20
#1793045144
watch -n 30 'curl -s localhost:8000/metrics | grep -E "num_requests_(running|waiting)|kv_cache_usage"'
#1793054412
podman stats --no-stream
#1793058115
podman logs --since 5m k3-dev-b | tail -5
