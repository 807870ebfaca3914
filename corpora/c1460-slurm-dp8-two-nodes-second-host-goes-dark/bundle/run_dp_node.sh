#!/bin/bash
# run_dp_node.sh (launched once per node by srun)
export NCCL_DEBUG=WARN
export VLLM_LOG_STATS_INTERVAL=60
HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent hosts "$HEAD" | awk '{print $1}')
COMMON="/scratch/shared/models/Qwen3-30B-A3B-Instruct-2507 --served-model-name qwen3-30b-a3b --data-parallel-size 8 --data-parallel-size-local 4 --data-parallel-address $HEAD_IP --data-parallel-rpc-port 13345 --enable-expert-parallel"
if [ "$SLURM_NODEID" = "0" ]; then
  echo "[run_dp_node] SLURM_NODEID=0 host=$(hostname) -> API server + DP ranks 0-3"
  exec vllm serve $COMMON --host 0.0.0.0 --port 8000 --disable-uvicorn-access-log
else
  echo "[run_dp_node] SLURM_NODEID=$SLURM_NODEID host=$(hostname) -> headless, start rank 4"
  exec vllm serve $COMMON --headless --data-parallel-start-rank 4
fi
