#!/bin/bash
# started on each of dgx-b12 dgx-b13 dgx-b14 dgx-b15 via pdsh (same command everywhere)
source /opt/venv/bin/activate       # vllm 0.22.0 / torch 2.10.0+cu129
export VLLM_ENABLE_V1_MULTIPROCESSING=0 PYTHONFAULTHANDLER=1 LOGLEVEL=INFO
export NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=bond0 NCCL_IB_HCA=^mlx5_bond_0
export TORCH_NCCL_DUMP_ON_TIMEOUT=1
cd /data/jobs/k2batch
torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint dgx-b12:29400 \
  --rdzv-id k2batch-0521 --max-restarts 0 --tee 3 \
  generate_k2.py --model /mnt/weights/moonshotai/Kimi-K2-Instruct-0905 --tp 8 --pp 4 --in in/agentic-traces-0521.jsonl --out out/0521 \
  2>&1 | tee /data/jobs/k2batch/logs/torchrun-$(hostname -s).log
