#!/bin/bash
# /shared/k3/serve-node.sh (runs inside the pyxis container, one task per node)
echo "[$(hostname)] vllm $(python3 -c 'import vllm;print(vllm.__version__)') torch $(python3 -c 'import torch;print(torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())')"
echo "[$(hostname)] CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES} NCCL_DEBUG=${NCCL_DEBUG} NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME} NCCL_IB_HCA=${NCCL_IB_HCA}"
COMMON="--model /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
  --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3 \
  --max-model-len 131072 --gpu-memory-utilization 0.9 \
  --nnodes 2 --master-addr ${HEAD_IP} --master-port 29600"
if [ "${SLURM_NODEID}" = "0" ]; then
  exec vllm serve ${COMMON} --node-rank 0 --port 8000
else
  exec vllm serve ${COMMON} --node-rank ${SLURM_NODEID} --headless
fi
