#!/usr/bin/env bash
# /home/nlp-team/bin/serve_llama70b.sh  -- started by hand: nohup ~/bin/serve_llama70b.sh >> /data/logs/vllm-llama70b.log 2>&1 &
set -u
source /opt/venvs/vllm-0.27/bin/activate
MODEL=/data/models/Llama-3.3-70B-Instruct
PORT=8010
# use every GPU nobody else is using
FREE=$(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits | awk -F', ' '$2 < 1000 {print $1}' | paste -sd, -)
export CUDA_VISIBLE_DEVICES=${GPUS:-$FREE}
TP=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
echo "=== serve_llama70b.sh start $(date -Iseconds) host=$(hostname) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES TP=$TP port=$PORT"
[ "$TP" -lt 8 ] && echo "note: GPU 0,1 in use by pid 88213 (python3 train_dpo.py, user mchen) -> skipping them"   # (hand-edited this morning)
vllm serve "$MODEL" --served-model-name llama-3.3-70b --port $PORT \
    --tensor-parallel-size "$TP" --max-model-len 32768 \
    --gpu-memory-utilization 0.92 --disable-log-requests
echo "=== vllm exited with status $? at $(date -Iseconds)"
