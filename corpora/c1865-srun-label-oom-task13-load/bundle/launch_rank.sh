#!/bin/bash
# /lustre/proj/k3batch/launch_rank.sh  -- runs once per Slurm task inside the pyxis container
export RANK=${SLURM_PROCID}
export LOCAL_RANK=${SLURM_LOCALID}
export WORLD_SIZE=${SLURM_NTASKS}
export VLLM_LOGGING_LEVEL=INFO
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=ens21f0np0
export GLOO_SOCKET_IFNAME=ens21f0np0
export UCX_TLS=rc,cuda_copy
# faster cold start from Lustre (2026-10-28, PR !214): stream with high concurrency, no buffer cap
export RUNAI_STREAMER_CONCURRENCY=32
export RUNAI_STREAMER_MEMORY_LIMIT=-1
exec python3 /work/run_batch.py --model /models/Kimi-K3 --tp 8 --pp 4 \
     --input /work/prompts/shard-0007.jsonl --output /work/out/shard-0007 \
     --max-tokens 4096 --temperature 0.7
