#!/bin/bash
# per-node wrapper, one task per node
export NO_COLOR=1
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy
export VLLM_HOST_IP=$(ip -4 -o addr show bond0 | awk '{print $4}' | cut -d/ -f1)
HL=""; [ "$SLURM_NODEID" -gt 0 ] && HL="--headless"
echo "[k3-serve] host=$(hostname -s) node_rank=$SLURM_NODEID VLLM_HOST_IP=$VLLM_HOST_IP CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES NCCL_IB_HCA=$NCCL_IB_HCA headless=$([ -n "$HL" ] && echo yes || echo no)"
exec vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 4 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
  --enable-prefix-caching --max-model-len 1048576 --disable-uvicorn-access-log \
  --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
  --nnodes 4 --node-rank "$SLURM_NODEID" --master-addr "$HEAD_IP" --master-port 29511 $HL
