#!/bin/bash
# hgx-h200-07 (Ray head + API server)
docker run -d --name k3-ray-head --gpus all --network host --ipc host --shm-size 64g \
  --ulimit memlock=-1 --device /dev/infiniband --cap-add IPC_LOCK \
  -v /data/hf:/root/.cache/huggingface -v /data/vllm-cache:/root/.cache/vllm \
  -e HF_HUB_OFFLINE=1 -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 -e VLLM_HOST_IP=10.20.4.17 \
  -v /opt/k3/entrypoint.sh:/entrypoint.sh:ro --entrypoint /entrypoint.sh \
  vllm/vllm-openai:kimi-k3 head \
  moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 524288 --max-num-seqs 96 \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --disable-uvicorn-access-log --host 0.0.0.0 --port 8000
