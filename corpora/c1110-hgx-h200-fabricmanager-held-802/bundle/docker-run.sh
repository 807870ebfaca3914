docker run -d --name vllm-qwen3-235b --restart unless-stopped --gpus all --ipc=host --network host \
  -v /data/hf:/root/.cache/huggingface -e HF_HUB_OFFLINE=1 -e VLLM_LOGGING_LEVEL=INFO \
  vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 --tensor-parallel-size 8 \
  --max-model-len 131072 --enable-expert-parallel --gpu-memory-utilization 0.92 --port 8000 --served-model-name qwen3-235b
