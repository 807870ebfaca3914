#!/bin/bash
# one task per node; task id == node rank (srun block distribution)
echo "launch_node.sh: SLURM_PROCID=$SLURM_PROCID SLURM_NODEID=$SLURM_NODEID SLURM_LOCALID=$SLURM_LOCALID -> vllm node-rank $SLURM_NODEID"
EXTRA=''
if [ "$SLURM_NODEID" != "0" ]; then EXTRA="--headless"; fi
exec vllm serve /lustre/models/DeepSeek-R1-0528 --served-model-name r1 --trust-remote-code \
   --tensor-parallel-size 8 --pipeline-parallel-size 4 --nnodes $SLURM_NNODES --node-rank $SLURM_NODEID \
   --master-addr 10.72.12.11 --max-model-len 131072 --enable-prefix-caching --reasoning-parser deepseek_r1 $EXTRA
