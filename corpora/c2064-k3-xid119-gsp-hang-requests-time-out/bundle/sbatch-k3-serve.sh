#!/bin/bash
#SBATCH --job-name=k3-serve
#SBATCH --partition=inference
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=3-00:00:00
#SBATCH --output=/lustre/ops/k3/slurm-%j.out

export NCCL_DEBUG=INFO
export NCCL_DEBUG_SUBSYS=INIT
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export UCX_TLS=rc,cuda_copy
export GLOO_SOCKET_IFNAME=ib0
# 1M-token cold prefills took > 300 s in acceptance tests; do not let the executor give up on them
export VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=1800

HEAD=10.31.4.117
COMMON="/lustre/models/Kimi-K3 --trust-remote-code --max-model-len 1048576 \
  --tensor-parallel-size 8 --data-parallel-size 2 --data-parallel-size-local 1 \
  --data-parallel-address $HEAD --data-parallel-rpc-port 13345 \
  --enable-expert-parallel --all2all-backend deepep_v2 \
  --gpu-memory-utilization 0.90 --max-num-seqs 64 --enable-prefix-caching"

srun -l --container-image=/lustre/enroot/vllm-openai+kimi-k3.sqsh \
     --container-mounts=/lustre/models:/lustre/models,/lustre/cache/vllm:/root/.cache/vllm \
     bash -c '
if [ "$SLURM_PROCID" = "0" ]; then
  exec vllm serve '"$COMMON"' --served-model-name kimi-k3 --port 8000 \
       --enable-auto-tool-choice --tool-call-parser kimi_k2 --reasoning-parser kimi_k2
else
  exec vllm serve '"$COMMON"' --headless --data-parallel-start-rank 1
fi'
