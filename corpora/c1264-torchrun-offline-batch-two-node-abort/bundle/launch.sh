#!/usr/bin/env bash
# Offline batch generation for the Jan eval set.
# Qwen3-235B-A22B-Instruct-2507, TP8 x PP2 over two H200 boxes, vLLM external_launcher (torchrun).
# Run from the first host in NODES. The array index is the torchrun --node-rank.
set -euo pipefail

NODES=(h200-sj3-14 h200-sj3-09)
MASTER=${NODES[0]}
PORT=29531
WORKDIR=/mnt/work/qwen-batch

for NR in "${!NODES[@]}"; do
  ssh -o BatchMode=yes "${NODES[$NR]}" \
    "cd ${WORKDIR} && source /opt/venv/bin/activate && \
     env PYTHONFAULTHANDLER=1 NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=bond0 \
         NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
         VLLM_LOGGING_LEVEL=INFO \
     torchrun --nnodes 2 --nproc-per-node 8 --node-rank ${NR} \
              --master-addr ${MASTER} --master-port ${PORT} --tee 3 \
       batch_gen.py --prompts prompts/eval_0121.jsonl --out out/eval_0121 --chunk 2000 \
     > logs/node${NR}.log 2>&1" &
done
wait
