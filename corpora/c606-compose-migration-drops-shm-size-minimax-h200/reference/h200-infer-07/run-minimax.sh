#!/bin/bash
# start MiniMax-Text-01 on h200-infer-07 (kept in /srv/llm/run-minimax.sh until the move to compose)
docker run -d --name minimax --gpus all --network host --shm-size 32g \
  -e NCCL_DEBUG=WARN -e HF_HUB_OFFLINE=1 -v /srv/hf:/root/.cache/huggingface \
  --entrypoint python3 vllm/vllm-openai:v0.8.3 -m vllm.entrypoints.openai.api_server \
  --model MiniMaxAI/MiniMax-Text-01 --served-model-name minimax-01 --trust-remote-code --tensor-parallel-size 8 --quantization experts_int8 --max-model-len 131072 --max-num-seqs 32 --gpu-memory-utilization 0.95
