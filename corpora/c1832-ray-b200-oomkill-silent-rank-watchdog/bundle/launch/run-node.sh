#!/bin/bash
# started on both nodes at 03:58 UTC; head: b200-k07 (10.52.8.17), worker: b200-k08 (10.52.8.18)
ROLE=$1
docker run -d --name k3 --gpus all --network host --ipc host --pid host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /models:/models -v /var/log/k3:/var/log/k3 --env-file /etc/k3/k3.env \
  --entrypoint bash vllm/vllm-openai:kimi-k3 -c \
  "if [ $ROLE = head ]; then ray start --head --node-ip-address 10.52.8.17 --port 6379 --block; \
   else ray start --address 10.52.8.17:6379 --node-ip-address 10.52.8.18 --block; fi"

# then on the head, 04:02 UTC:
docker exec -d k3 bash -c 'vllm serve /models/moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --max-num-seqs 64 --gpu-memory-utilization 0.90 --disable-uvicorn-access-log \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  >> /var/log/k3/vllm-serve.log 2>&1'
