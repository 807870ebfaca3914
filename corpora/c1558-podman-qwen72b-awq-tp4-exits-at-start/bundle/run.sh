# how the container was started (copied from ~/deploy/qwen72/run.sh on aurora-gpu3, 2026-11-18)
podman run -d --name vllm-qwen72 \
  --device nvidia.com/gpu=all \
  --security-opt=label=disable \
  --network host \
  --env-file /etc/vllm/qwen72.env \
  -v /srv/hf-cache:/root/.cache/huggingface:Z \
  docker.io/vllm/vllm-openai:v0.27.1 \
  --model Qwen/Qwen2.5-72B-Instruct-AWQ --served-model-name qwen72 \
  --tensor-parallel-size 4 --max-model-len 32768 --gpu-memory-utilization 0.9 \
  --max-num-seqs 64 --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser hermes
