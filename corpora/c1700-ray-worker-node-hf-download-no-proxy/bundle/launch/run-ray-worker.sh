#!/bin/bash
# worker nodes (a3u-gpu-057): join the Ray cluster on a3u-gpu-041
set -euo pipefail
source /etc/k3/ray.env
HEAD=10.88.14.41
docker rm -f ray-worker 2>/dev/null || true
docker run -d --name ray-worker --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband \
  --env-file /etc/k3/ray.env \
  -e HF_HOME=/mnt/hf -e HF_TOKEN_PATH=/run/secrets/hf_token \
  -v /mnt/nvme/hf:/mnt/hf -v /etc/k3/secrets:/run/secrets:ro \
  --entrypoint /bin/bash vllm/vllm-openai:kimi-k3 \
  -c "ray start --address=${HEAD}:6379 --num-gpus=8 --block"
