#!/usr/bin/env bash
# hgx-b300-r12-08 (Ray worker only)
docker run -d --name k3-ray-worker --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --restart unless-stopped --device /dev/infiniband \
  -v /raid/models:/models --env-file /etc/k3/ray.env \
  --entrypoint ray vllm/vllm-openai:kimi-k3 \
  start --address=10.61.12.7:6379 --node-ip-address=10.61.12.8 --num-gpus=8 --disable-usage-stats --block
