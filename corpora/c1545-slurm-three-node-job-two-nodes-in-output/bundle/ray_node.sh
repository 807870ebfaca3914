#!/bin/bash
# one task per node, started by srun from job.sbatch; task 0 runs the ray head
source /shared/apps/vllm/0.11.0/venv/bin/activate
export VLLM_HOST_IP=$(getent hosts "$(hostname -s)-ib0" | awk '{print $1}')
if [ "$SLURM_PROCID" -eq 0 ]; then
    ray start --head --node-ip-address="$VLLM_HOST_IP" --port=6379 \
        --num-gpus=8 --num-cpus=128 --disable-usage-stats --block
else
    sleep 10
    ray start --address="$RAY_HEAD_ADDR" --node-ip-address="$VLLM_HOST_IP" \
        --num-gpus=8 --num-cpus=128 --block
fi
