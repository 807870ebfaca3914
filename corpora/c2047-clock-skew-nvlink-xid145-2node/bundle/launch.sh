#!/bin/bash
# run on both nodes from the bastion: pdsh -w hgx-b300-[17-18] /opt/k3/launch.sh
# node_rank 0 = hgx-b300-17 (API server), node_rank 1 = hgx-b300-18 (--headless)
NODE_RANK=$( [ "$(hostname -s)" = hgx-b300-17 ] && echo 0 || echo 1 )
EXTRA=$( [ "$NODE_RANK" = 1 ] && echo --headless )
docker rm -f vllm-k3 2>/dev/null
docker run -d --name vllm-k3 --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
  --ulimit memlock=-1 -v /models:/models -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 \
  -e NCCL_DEBUG=WARN -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7 \
  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 --tensor-parallel-size 8 --pipeline-parallel-size 2 \
  --nnodes 2 --node-rank $NODE_RANK --master-addr 10.31.4.17 --master-port 29511 $EXTRA \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 1048576 --max-num-seqs 64 --gpu-memory-utilization 0.92 --trust-remote-code \
  --served-model-name kimi-k3 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
