#!/bin/bash
# /opt/llm/launch-mistral.sh  (run by ops on inf-l40s-03)
docker run -d --name vllm-mistral \
  --gpus all --ipc=host --shm-size 16g \
  -p 8000:8000 \
  -v /data/hf:/root/.cache/huggingface \
  -e HF_TOKEN_FILE=/run/secrets/hf_token \
  vllm/vllm-openai:v0.11.0 \
  --model mistralai/Mistral-Small-3.2-24B-Instruct-2506 \
  --tokenizer-mode mistral --config-format mistral --load-format mistral \
  --served-model-name mistral-small \
  --tensor-parallel-size 4 --max-model-len 65536 --gpu-memory-utilization 0.9 \
  --limit-mm-per-prompt '{"image": 4}' \
  --enable-auto-tool-choice --tool-call-parser mistral
