#!/bin/bash
# run on both nodes via pdsh -w hgx-h200-a[17-18]
export NCCL_DEBUG=WARN NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9 NCCL_SOCKET_IFNAME=bond0
export PYTHONFAULTHANDLER=1 VLLM_ENABLE_V1_MULTIPROCESSING=0
torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint hgx-h200-a17:29400 --rdzv-id eval-v31-0314 \
  --log-dir /lustre/jobs/eval-v31/torchrun-logs --redirects 3 \
  /lustre/jobs/eval-v31/batch_infer.py --model /models/DeepSeek-V3.1 --tp 8 --pp 2 --shards 400
