#!/bin/bash
set -u
ROLE=$1; shift
ip=${VLLM_HOST_IP}
if [ "$ROLE" = head ]; then
  echo "[entrypoint] role=head host=$(hostname -s) ip=$ip image=vllm/vllm-openai:kimi-k3 (vLLM $(python3 -c 'import vllm;print(vllm.__version__)'), ray $(ray --version | awk '{print $3}'))"
  ray start --head --port=6379 --node-ip-address=$ip --num-gpus=8 --disable-usage-stats
  until [ "$(python3 -c 'import ray;ray.init(address="auto",logging_level="ERROR");print(int(ray.cluster_resources().get("GPU",0)))' 2>/dev/null)" = 16 ]; do
    echo "[entrypoint] waiting for 16 GPUs in the Ray cluster (have $(python3 -c 'import ray;ray.init(address="auto",logging_level="ERROR");print(int(ray.cluster_resources().get("GPU",0)))' 2>/dev/null))"; sleep 10
  done
  echo "[entrypoint] launching: vllm serve $1 --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 ..."
  vllm serve "$@"; rc=$?
  echo "[entrypoint] vllm serve exited with code $rc; stopping ray"
  ray stop
  echo "[entrypoint] done (exit $rc)"
  exit $rc
else
  echo "[entrypoint] role=worker host=$(hostname -s) ip=$ip image=vllm/vllm-openai:kimi-k3 (vLLM $(python3 -c 'import vllm;print(vllm.__version__)'), ray $(ray --version | awk '{print $3}'))"
  echo "[entrypoint] joining ray head at $1"
  ray start --address=$1 --node-ip-address=$ip --num-gpus=8 --disable-usage-stats --block &
  sleep 8; echo "[entrypoint] ray worker is up; tailing (Ctrl-C / docker stop to leave)"
  wait; rc=$?
  echo "[entrypoint] ray worker exited (code $rc)"
  exit $rc
fi
