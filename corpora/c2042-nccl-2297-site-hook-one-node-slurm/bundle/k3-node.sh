#!/bin/bash
# /lustre/fsw/k3/k3-node.sh -- runs inside the pyxis container, one task per node
echo "[k3-node] $(date -Is) host=$(hostname -s) node_rank=$SLURM_NODEID SLURM_PROCID=$SLURM_PROCID SLURM_JOB_ID=$SLURM_JOB_ID"
echo "[k3-node] image=$PYXIS_IMAGE_PATH ($(cat /etc/vllm-image-ref 2>/dev/null))"
echo "[k3-node] driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1) gpus=$(nvidia-smi -L | wc -l) ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
env | grep -E '^(NCCL_|GLOO_|UCX_|LD_LIBRARY_PATH|CUDA_VISIBLE|NO_COLOR)' | sort | sed 's/^/[k3-node] /'
echo "[k3-node] torch $(python3 -c 'import torch;print(torch.__version__, "(cuda", torch.version.cuda+")")'), vllm $(python3 -c 'import vllm;print(vllm.__version__)')"

ARGS=(--trust-remote-code --tensor-parallel-size 8 --pipeline-parallel-size 4 --enable-expert-parallel
      --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 1048576
      --gpu-memory-utilization 0.9 --served-model-name kimi-k3 --enable-auto-tool-choice
      --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
      --nnodes 4 --node-rank "$SLURM_NODEID" --master-addr "$HEAD_IP" --master-port 29617)
if [ "$SLURM_NODEID" = 0 ]; then
  exec vllm serve /models/moonshotai/Kimi-K3 --host 0.0.0.0 --port 8000 "${ARGS[@]}"
else
  exec vllm serve /models/moonshotai/Kimi-K3 --headless "${ARGS[@]}"
fi
