#!/bin/bash
# /opt/llm/acme-support/run.sh  (as executed at 13:00 UTC on h200-inf-12; only MODEL changed vs. v3)
MODEL=/models/acme-support-235b-a22b-v4
docker rm -f acme-support 2>/dev/null
docker run -d --name acme-support --gpus all --ipc=host --shm-size 32g -p 8000:8000 \
  --log-driver json-file --log-opt max-size=500m --log-opt max-file=3 \
  -v /raid/models:/models:ro \
  -e HF_HUB_OFFLINE=1 -e VLLM_LOGGING_LEVEL=INFO \
  vllm/vllm-openai:v0.17.1 \
  --model ${MODEL} --served-model-name acme-support \
  --tensor-parallel-size 8 --enable-expert-parallel \
  --max-model-len 65536 --max-num-seqs 128 --gpu-memory-utilization 0.90 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser hermes \
  --disable-access-log-for-endpoints /health,/metrics \
  --host 0.0.0.0 --port 8000
# -> 9e4b71c2d05a38f6e1b7c94a20d35e8f6a1c7b90e3d42f58a6b19c07d3e2f4a1
