#!/bin/bash
# pdsh -w hgx-h100-0[17-18] /opt/llm/launch.sh   (2026-03-03 09:40 UTC)
# conda env /opt/llm/venv-vllm-0.13 on shared NFS: vllm 0.13.0, torch 2.9.0+cu129, nvidia-nccl-cu12 2.27.5
source /opt/llm/venv-vllm-0.13/bin/activate
export NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0 NCCL_IB_HCA=mlx5
NODE_RANK=$([ "$(hostname -s)" = "hgx-h100-017" ] && echo 0 || echo 1)
EXTRA=$([ "$NODE_RANK" = "1" ] && echo "--headless" || echo "--enable-auto-tool-choice --tool-call-parser deepseek_v31")
nohup vllm serve /data/models/DeepSeek-V3.1 --served-model-name deepseek-v3.1 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank $NODE_RANK \
  --master-addr 10.70.2.17 --master-port 29500 --max-model-len 65536 --gpu-memory-utilization 0.9 $EXTRA \
  > /var/log/llm/vllm-serve.log 2>&1 &
