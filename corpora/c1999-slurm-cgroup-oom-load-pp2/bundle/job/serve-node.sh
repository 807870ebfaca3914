#!/bin/bash
# /lustre/inf/k3/bin/serve-node.sh  (one task per node, started by srun)
set -x
echo "[$(hostname -s)] node_id=$SLURM_NODEID head=$HEAD ($HEAD_IP) job=$SLURM_JOB_ID"
set +x
COMMON=(--trust-remote-code --served-model-name kimi-k3
        --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel
        --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching
        --max-model-len 262144 --gpu-memory-utilization 0.92
        --nnodes 2 --node-rank "$SLURM_NODEID" --master-addr "$HEAD_IP" --master-port 29533
        --model-loader-extra-config '{"enable_multithread_load": true, "num_threads": 24}'
        --tool-call-parser kimi_k3 --enable-auto-tool-choice --reasoning-parser kimi_k3)
if [ "$SLURM_NODEID" = "0" ]; then
  exec vllm serve /models/moonshotai/Kimi-K3 --host 0.0.0.0 --port 8000 "${COMMON[@]}"
else
  exec vllm serve /models/moonshotai/Kimi-K3 --headless "${COMMON[@]}"
fi
