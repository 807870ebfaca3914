#!/bin/bash
# /opt/llm/run-kimi-k3.sh  (user-data, p6-b300.48xlarge, Ubuntu 24.04 DLAMI, driver 580.95.05)
docker rm -f kimi-k3 2>/dev/null
docker run -d --name kimi-k3 --restart on-failure:5 \
  --gpus all --ipc=host --network host --ulimit memlock=-1 --shm-size 64g \
  --log-driver awslogs --log-opt awslogs-region=us-west-2 --log-opt awslogs-group=/llm/prod/kimi-k3 \
  --log-opt awslogs-stream=ip-10-3-41-17/kimi-k3 \
  -v /opt/dlami/nvme/hf:/root/.cache/huggingface -v /opt/dlami/nvme/vllm-cache:/root/.cache/vllm \
  -e HF_HUB_OFFLINE=1 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 262144 --max-num-seqs 128 --gpu-memory-utilization 0.9 \
  --trust-remote-code --served-model-name kimi-k3 --port 8000 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
