#!/usr/bin/env bash
# K3 bring-up on the two B300 boxes of rack r05 (ticket INF-7731).
# 1) Ray head container (started by hand, see docker-inspect-ray-head.json):
#    docker run -d --name ray-head --gpus all --network host --ipc host --shm-size 64g \
#      --ulimit memlock=-1 --ulimit stack=67108864 --device /dev/infiniband \
#      -v /mnt/models:/mnt/models:ro -v /mnt/hf-cache:/root/.cache/huggingface \
#      --env-file k3.env vllm/vllm-openai:kimi-k3 \
#      bash -lc 'ray start --head --node-ip-address=10.41.8.21 --port=6379 --dashboard-host=0.0.0.0 --num-gpus=8 --block'
# 2) Ray worker container: `docker compose -p k3-ray up -d ray-worker` with the compose file of the
#    inference-ops repo (see docker-inspect-k3-ray-ray-worker-1.json)
# 3) once `ray status` shows 16 GPUs:
docker exec ray-head bash -lc 'vllm serve moonshotai/Kimi-K3 \
    --served-model-name kimi-k3 --trust-remote-code \
    --distributed-executor-backend ray \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
    --max-model-len 524288 --gpu-memory-utilization 0.9 \
    --enable-prefix-caching \
    --safetensors-load-strategy eager \
    --reasoning-parser kimi_k3 --enable-auto-tool-choice --tool-call-parser kimi_k3 \
    --host 0.0.0.0 --port 8000' > vllm-serve.log 2>&1
