#!/usr/bin/env bash
# kimi-k3 on Azure ND H200 v5, TP8 x PP2 with the Ray executor
#   head   : nd-h200-head   10.1.0.4   (pay-as-you-go VM, runs Ray head + vllm serve)
#   worker : k3spot000004   10.1.0.9   (VMSS "k3spot", Spot priority, eviction policy Delete, max price -1)
# both nodes: image vllm/vllm-openai:kimi-k3 via conda env /opt/conda/envs/vllm (same wheel set), driver 580.95.05
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_ib0,mlx5_ib1,mlx5_ib2,mlx5_ib3,mlx5_ib4,mlx5_ib5,mlx5_ib6,mlx5_ib7
export NCCL_SOCKET_IFNAME=eth0 GLOO_SOCKET_IFNAME=eth0
export VLLM_LOG_STATS_INTERVAL=60

ray start --head --port 6379 --num-gpus 8 --dashboard-host 0.0.0.0
ssh k3spot000004 "source /etc/profile.d/k3.sh && ray start --address 10.1.0.4:6379 --num-gpus 8"

nohup vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --max-model-len 262144 --gpu-memory-utilization 0.9 --disable-uvicorn-access-log \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  > /var/log/vllm/vllm-serve.log 2>&1 &
