#!/bin/bash
source /lustre/envs/vllm-0.26.2/bin/activate
echo "[run_node.sh] host=$(hostname -s) SLURM_NODEID=$SLURM_NODEID SLURM_PROCID=$SLURM_PROCID job=$SLURM_JOB_ID start=$(date -Is)"
MASTER_IP=$(getent hosts "$MASTER_ADDR" | awk '{print $1}')
echo "[run_node.sh] master_addr=$MASTER_IP master_port=$MASTER_PORT venv=$VIRTUAL_ENV"
COMMON="--tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank $SLURM_NODEID \
        --master-addr $MASTER_IP --master-port $MASTER_PORT"
MODEL=/lustre/models/meta-llama/Llama-3.1-405B-Instruct-FP8
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve $MODEL $COMMON --host 0.0.0.0 --port 8000 --served-model-name llama-405b \
       --max-model-len 65536 --max-num-seqs 128 --gpu-memory-utilization 0.92 --enable-prefix-caching
else
  exec vllm serve $MODEL $COMMON --headless
fi
