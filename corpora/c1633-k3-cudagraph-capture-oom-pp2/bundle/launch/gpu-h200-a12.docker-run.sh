#!/bin/bash
# node_rank 1 (headless workers) -- gpu-h200-a12, 10.44.6.22
docker run -d --name k3-pp1 --runtime nvidia --gpus all --ipc=host --network host \
  --ulimit memlock=-1 --ulimit stack=67108864 \
  -v /data/models:/models -v /data/vllm-cache:/root/.cache/vllm \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  -e UCX_TLS=rc,cuda_copy -e NCCL_DEBUG=WARN \
  -e VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 \
  vllm/vllm-openai:kimi-k3 \
  --model /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided \
  --nnodes 2 --node-rank 1 --master-addr 10.44.6.17 --master-port 29600 --headless \
  --max-model-len 262144 --gpu-memory-utilization 0.95 \
  --max-num-seqs 512 --max-num-batched-tokens 16384 --enable-prefix-caching
