#!/bin/sh
# inf-h200-02: qwen3-32b (GPUs 2,3). No restart policy: the on-call wants to see crashes.
docker run -d --name qwen3-32b --gpus '"device=2,3"' --ipc=host --network host \
  -v /data/hf:/root/.cache/huggingface -v /data/vllm-cache:/root/.cache/vllm \
  vllm/vllm-openai:v0.11.0 \
  vllm serve Qwen/Qwen3-32B --served-model-name qwen3-32b --tensor-parallel-size 2 \
  --max-model-len 40960 --gpu-memory-utilization 0.88 --max-num-seqs 96 --enable-prefix-caching \
  --kv-transfer-config '{"kv_connector":"OffloadingConnector","kv_role":"kv_both","kv_connector_extra_config":{"num_cpu_blocks":24000,"block_size":64}}'
