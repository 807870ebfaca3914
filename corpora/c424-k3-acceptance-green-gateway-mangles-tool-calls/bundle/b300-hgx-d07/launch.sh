# b300-hgx-d07: how the acceptance server was started (copied from the runbook, as run)
docker run -d --name kimi-k3 --gpus all --ipc=host --network host \
  -v /models/hf:/root/.cache/huggingface -e VLLM_LOG_STATS_INTERVAL=60 \
  vllm/vllm-openai:kimi-k3 \
  moonshotai/Kimi-K3 --trust-remote-code --served-model-name kimi-k3 \
  --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --max-model-len 1048576 --gpu-memory-utilization 0.92 --enable-prefix-caching \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
