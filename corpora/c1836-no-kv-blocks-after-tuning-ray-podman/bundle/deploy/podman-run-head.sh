#!/usr/bin/env bash
# h200-b07. The worker node uses the same image with: ray start --address=10.42.7.11:6379 --block
podman run -d --name k3-head --replace \
  --device nvidia.com/gpu=all --security-opt=label=disable \
  --network host --ipc host --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband \
  -v /srv/hf-cache:/root/.cache/huggingface -v /srv/vllm-cache:/root/.cache/vllm \
  -v /var/log/k3:/var/log/k3 -v /srv/k3-deploy/deploy:/deploy:ro \
  --entrypoint /bin/bash \
  docker.io/vllm/vllm-openai:kimi-k3 \
  -c 'ray start --head --port=6379 --dashboard-host=0.0.0.0 --num-gpus=8 && /deploy/k3-serve.sh; sleep infinity'
