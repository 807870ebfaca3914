#!/bin/bash
# k3 bring-up on the sfo-a rack (run from the jump host); image built from vllm/vllm-openai:kimi-k3
IMG=registry.sfo.internal/llm/vllm-openai:kimi-k3-20261120
COMMON="--gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 --ulimit stack=67108864 \
  --device /dev/infiniband -v /mnt/models:/mnt/models \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_DEBUG=WARN -e UCX_TLS=rc,cuda_copy -e HF_HOME=/mnt/models -e VLLM_LOGGING_LEVEL=INFO"

# workers first
for h in h100-sfo-a12 h100-sfo-a13 h100-sfo-a14; do
  ssh $h "docker rm -f ray-k3 2>/dev/null; docker run -d --name ray-k3 $COMMON $IMG \
          bash -c 'ray start --block --address=10.31.4.11:6379 --num-gpus=8 --node-ip-address=\$(hostname -i)'"
done

# head: ray head + vllm serve in the same container (entrypoint waits for 32 GPUs)
ssh h100-sfo-a11 "docker rm -f vllm-k3 2>/dev/null; docker run -d --name vllm-k3 $COMMON -p 8000:8000 $IMG \
  bash -xc 'ray start --head --node-ip-address=10.31.4.11 --port=6379 --num-gpus=8 --dashboard-host=0.0.0.0 --disable-usage-stats; \
            wait_for_gpus 32; \
            exec vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 \
              --tensor-parallel-size 8 --pipeline-parallel-size 4 --distributed-executor-backend ray \
              --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
              --enable-prefix-caching --max-model-len 524288 --trust-remote-code \
              --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 --download-dir /mnt/models'"
