#!/bin/bash
# k3 bring-up on the two B200 boxes (Ray 2.52, vllm/vllm-openai:kimi-k3 image, host network)
# head (b200-ray-01):   docker run ... --network host --ipc host --gpus all vllm/vllm-openai:kimi-k3 \
#                         ray start --head --port 6379 --dashboard-host 0.0.0.0 --block
# worker (b200-ray-02): docker run ... --network host --ipc host --gpus all vllm/vllm-openai:kimi-k3 \
#                         ray start --address 10.42.8.11:6379 --block
export RAY_ADDRESS=http://10.42.8.11:8265
ray job submit --no-wait \
  --runtime-env-json '{"env_vars": {"NCCL_SOCKET_IFNAME": "eth0", "GLOO_SOCKET_IFNAME": "eth0", "UCX_TLS": "rc,cuda_copy", "RUNAI_STREAMER_CONCURRENCY": "64"}}' \
  -- vllm serve /mnt/weights/moonshotai/Kimi-K3 \
     --served-model-name kimi-k3 --trust-remote-code \
     --distributed-executor-backend ray \
     --tensor-parallel-size 8 --pipeline-parallel-size 2 \
     --enable-expert-parallel --all2all-backend deepep_v2 \
     --load-format runai_streamer --model-loader-extra-config '{"concurrency": 64}' \
     --max-model-len 262144 --gpu-memory-utilization 0.92 \
     --enable-prefix-caching --host 0.0.0.0 --port 8000
