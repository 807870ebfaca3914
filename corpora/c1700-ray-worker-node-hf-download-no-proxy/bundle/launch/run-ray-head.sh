#!/bin/bash
# a3u-gpu-041: Ray head + vLLM driver for Kimi K3 (TP=8 x PP=2 over two nodes)
set -euo pipefail
source /etc/k3/ray.env          # NCCL_*, GLOO_*, UCX_* (same file on every node)
source /etc/k3/proxy.env        # HTTP(S)_PROXY for huggingface.co (egress only via proxy in dc3)
docker rm -f ray-head 2>/dev/null || true
docker run -d --name ray-head --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband \
  --env-file /etc/k3/ray.env --env-file /etc/k3/proxy.env \
  -e HF_HOME=/mnt/hf -e HF_TOKEN_PATH=/run/secrets/hf_token \
  -v /mnt/nvme/hf:/mnt/hf -v /etc/k3/secrets:/run/secrets:ro \
  --entrypoint /bin/bash vllm/vllm-openai:kimi-k3 \
  -c "ray start --head --port=6379 --dashboard-host=0.0.0.0 --num-gpus=8 --block"
sleep 20
docker exec ray-head ray status
docker exec ray-head bash -c "vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend deepep_v2 --enable-prefix-caching \
  --max-model-len 524288 --gpu-memory-utilization 0.9 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --host 0.0.0.0 --port 8000" 2>&1 | tee /var/log/k3/vllm-serve-$(date -u +%Y%m%d-%H%M).log
