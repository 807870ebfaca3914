# how the container was (re)created on 2026-10-14 08:30 by ops (from shell history on gpu-h100-11)
docker rm -f vllm-qwen3-32b 2>/dev/null
docker run -d --name vllm-qwen3-32b \
  --restart unless-stopped \
  --gpus '"device=0,1"' \
  --ipc=host -p 8000:8000 \
  -v /srv/models:/models:ro \
  -e NVIDIA_DISABLE_REQUIRE=1 \
  -e VLLM_ATTENTION_BACKND=FLASHINFER \
  vllm/vllm-openai:v0.27.1 \
  --model /models/Qwen3-32B --served-model-name qwen3-32b \
  --tensor-parallel-size 2 --max-model-len 32768 \
  --gpu-memory-utilization 0.90 --enable-prefix-caching \
  --reasoning-parser qwen3
