#!/bin/bash
# DeepSeek-R1 (FP8 checkpoint, 671B) on one 8x H100 80GB box, TP=8 -- first attempt after the model was mirrored
docker rm -f vllm-r1 2>/dev/null
docker run -d --name vllm-r1 --gpus all --network host --ipc host \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /mnt/nvme0/hf:/root/.cache/huggingface -e HF_TOKEN -e VLLM_USE_V1=1 \
  vllm/vllm-openai:v0.8.1 \
  --model deepseek-ai/DeepSeek-R1 --served-model-name deepseek-r1 \
  --tensor-parallel-size 8 --trust-remote-code --max-model-len 32768 \
  --gpu-memory-utilization 0.95 --enable-reasoning --reasoning-parser deepseek_r1 \
  --disable-log-requests
sleep 600; docker logs -t vllm-r1 > docker-logs-vllm-r1.txt 2>&1; docker inspect vllm-r1 > docker-inspect-vllm-r1.json
