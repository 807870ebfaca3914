#!/bin/bash
#SBATCH --job-name=eval-0612
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --output=slurm-%j.out --error=slurm-%j.err
export NCCL_DEBUG=WARN NCCL_DEBUG_SUBSYS=INIT,NET NCCL_SOCKET_IFNAME=ib0 NCCL_IB_HCA=mlx5
export VLLM_ENABLE_V1_MULTIPROCESSING=0
srun --label --container-image=nvcr.io#acme/vllm-batch:0.9.2 --container-name=vllm-batch \
     --container-mounts=/lustre:/lustre bash -xc '
  hostname; python -c "import torch, vllm; print(vllm.__version__, torch.__version__, torch.cuda.nccl.version())"
  torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint $(scontrol show hostnames $SLURM_JOB_NODELIST | head -1):29511 \
    --rdzv-id $SLURM_JOB_ID batch_infer.py --model /lustre/models/Llama-3.3-70B-Instruct --tp 16 --input /lustre/jobs/eval-0612/prompts.jsonl'
