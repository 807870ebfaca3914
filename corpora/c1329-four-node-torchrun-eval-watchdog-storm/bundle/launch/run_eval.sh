#!/bin/bash
# launch/run_eval.sh -- started with: pdsh -w ^launch/hosts.txt 'cd /data/eval && NODE_RANK=$(grep -v "^#" launch/hosts.txt | grep -n "^$(hostname -s)$" | cut -d: -f1 | xargs -I{} expr {} - 1) ./launch/run_eval.sh'
set -euo pipefail
source /opt/venv/bin/activate
export CUDA_DEVICE_ORDER=PCI_BUS_ID
export VLLM_ENABLE_V1_MULTIPROCESSING=0
export NCCL_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
mkdir -p logs
torchrun --nnodes 4 --nproc-per-node 8 --node-rank "$NODE_RANK" \
    --master-addr dgx-k05 --master-port 29533 --tee 3 \
    run_eval.py --model /data/models/moonshotai/Kimi-K2-Instruct-0905 --tp 8 --pp 4 --max-model-len 32768 \
    --prompts data/k2-eval-24k.jsonl --out results/k2-0905-$(date +%Y%m%d) 2>&1 | tee logs/torchrun.log
