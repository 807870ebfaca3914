#!/bin/bash
if [ "$SLURM_PROCID" = "0" ]; then
  ray start --head --port=6379 --num-gpus=8 --disable-usage-stats=false
  until [ "$(python3 -c 'import ray; ray.init(address="auto", logging_level="ERROR"); print(int(ray.cluster_resources().get("GPU", 0)))')" = "16" ]; do sleep 5; done
  echo "[launch.sh] ray cluster has 16.0 GPU, starting vllm serve"
  exec vllm serve /lustre/shared/models/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
       --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
       --max-model-len 65536 --max-num-seqs 128 --gpu-memory-utilization 0.92 \
       --disable-uvicorn-access-log --host 0.0.0.0 --port 8000
else
  sleep 10
  exec ray start --address="$HEAD_IP:6379" --num-gpus=8 --block
fi
