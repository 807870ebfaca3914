#!/bin/bash
# /opt/inference/bin/run-kimi-k3.sh  -- rev 14 (CHG-20419, 2026-11-18)
# rev 13 -> 14: --gpu-memory-utilization 0.92 -> 0.975, add --max-num-seqs 512 --max-cudagraph-capture-size 512
docker rm -f kimi-k3 2>/dev/null || true
docker run -d --name kimi-k3 --runtime nvidia --gpus all --ipc=host --network host \
  --restart on-failure:2 \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  --log-driver awslogs --log-opt awslogs-region=us-west-2 \
  --log-opt awslogs-group=/inference/kimi-k3 --log-opt awslogs-stream=kimi-k3-prod \
  -v /mnt/nvme/hf:/root/.cache/huggingface -v /mnt/nvme/vllm-cache:/root/.cache/vllm \
  -e NCCL_DEBUG=WARN \
  vllm/vllm-openai:kimi-k3@sha256:4be0c91f27d35e6a8b1f0e2d7c9a3b5f6e1d8c2a7b4f0e9d3c6a1b8e5f2d7c04 \
  --model moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 1048576 --gpu-memory-utilization 0.975 --max-num-seqs 512 --max-cudagraph-capture-size 512 \
  --enable-prefix-caching --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --disable-uvicorn-access-log
