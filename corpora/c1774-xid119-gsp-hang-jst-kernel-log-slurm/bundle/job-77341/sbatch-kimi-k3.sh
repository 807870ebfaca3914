#!/bin/bash
#SBATCH -J kimi-k3-serve
#SBATCH -p infer
#SBATCH -N 2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH -t 7-00:00:00
#SBATCH -o slurm-%j.out
# prod endpoint kimi-k3 (PP=2 across b07/b12, TP=8 + EP inside each node over NVLink)

MASTER_ADDR=10.31.4.107
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_SOCKET_IFNAME=ibp12s0 GLOO_SOCKET_IFNAME=ibp12s0
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export UCX_TLS=rc,cuda_copy
export TZ=UTC NO_COLOR=1 HF_HOME=/models/hf

srun --label --kill-on-bad-exit=1 \
  --container-image=/shared/images/vllm-openai+kimi-k3.sqsh \
  --container-mounts=/shared/models:/models,/local/vllm-cache:/root/.cache \
  --container-env=TZ,NO_COLOR,NCCL_DEBUG,NCCL_DEBUG_SUBSYS,NCCL_SOCKET_IFNAME,GLOO_SOCKET_IFNAME,NCCL_IB_HCA,UCX_TLS,HF_HOME \
  bash -c '
    EXTRA=""; [ "$SLURM_NODEID" != "0" ] && EXTRA="--headless"
    exec vllm serve moonshotai/Kimi-K3 --trust-remote-code \
      --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
      --all2all-backend flashinfer_nvlink_one_sided \
      --nnodes 2 --node-rank $SLURM_NODEID --master-addr '"$MASTER_ADDR"' --master-port 29577 \
      --max-model-len 262144 --gpu-memory-utilization 0.92 --enable-prefix-caching \
      --served-model-name kimi-k3 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
      --host 0.0.0.0 --port 8000 $EXTRA'
