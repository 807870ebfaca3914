#!/usr/bin/env bash
# hgx-b300-r12-07 (Ray head + vllm serve). Started 2026-10-13 20:45 UTC by deploy/k3-ray.sh
docker run -d --name k3-ray --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --ulimit stack=67108864 --restart no \
  --device /dev/infiniband -v /raid/models:/models -v /raid/cache/vllm:/root/.cache/vllm \
  --env-file /etc/k3/ray.env \
  --entrypoint /opt/k3/entrypoint-head.sh \
  vllm/vllm-openai:kimi-k3
# entrypoint-head.sh: ray start --head ...; wait for 16 GPUs; exec vllm serve /models/moonshotai/Kimi-K3 \
#   --served-model-name kimi-k3 --trust-remote-code --tensor-parallel-size 8 --pipeline-parallel-size 2 \
#   --distributed-executor-backend ray --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
#   --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.90 --max-num-seqs 128 \
#   --disable-uvicorn-access-log --port 8000
