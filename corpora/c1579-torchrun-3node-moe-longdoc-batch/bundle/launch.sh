#!/usr/bin/env bash
# run on h100-sj-017, h100-sj-023, h100-sj-031 (tmux), 2026-06-02
source /fsx/envs/vllm023/bin/activate   # vllm 0.23.0, torch 2.10.0+cu129, nccl 2.28.9
export VLLM_ENABLE_V1_MULTIPROCESSING=0 LOGLEVEL=INFO NCCL_DEBUG=WARN
export FI_PROVIDER=efa FI_EFA_USE_DEVICE_RDMA=1 NCCL_SOCKET_IFNAME=enp
cd /fsx/jobs/sumbatch
torchrun --nnodes 3 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint h100-sj-017:29500 --rdzv-id sum-0602 \
    --max-restarts 0 --tee 3 run_sum.py --model /fsx/models/Qwen3-235B-A22B-Instruct-2507 --tp 8 --pp 3 --ep \
    --max-model-len 32768 --max-num-batched-tokens 16384 --batch 64 \
    --in /fsx/data/legal-sum/2026-06/shard-07.jsonl --out /fsx/out/legal-sum/shard-07 2>&1 | tee torchrun.log
