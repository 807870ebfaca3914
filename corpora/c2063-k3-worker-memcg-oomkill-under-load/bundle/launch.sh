#!/bin/bash
# /opt/llm/k3/launch.sh on b300-fra-04 (started by ops-bot 2026-11-03 03:09 UTC)
# host: 8x B300 SXM6, 2 TiB RAM. Container capped at 640g so node-exporter / fluent-bit / the
# nightly eval harness keep headroom (set after the 2026-10-20 host OOM on b300-fra-02).
docker run -d --name k3-serve \
  --gpus all --ipc=host --network host \
  --memory 640g --memory-swap 640g \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /raid/models/Kimi-K3:/models/Kimi-K3:ro \
  -v /raid/cache/vllm:/root/.cache/vllm \
  -e NCCL_DEBUG=WARN \
  --health-cmd 'curl -fsS http://127.0.0.1:8000/health || exit 1' --health-interval 30s \
  vllm/vllm-openai:kimi-k3 \
  /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 524288 --max-num-seqs 96 --max-num-batched-tokens 16384 \
  --gpu-memory-utilization 0.90 --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser kimi_k2 --reasoning-parser kimi_k2
# image: vllm/vllm-openai:kimi-k3 @ sha256:0b7e4d19c2a8f36e5d1b0c9a7e4f2d8b6c3a1e9f7d5b2c0a8e6f4d2b0c9a7e5f3 (vLLM 0.28.0, torch 2.11.0+cu130)
