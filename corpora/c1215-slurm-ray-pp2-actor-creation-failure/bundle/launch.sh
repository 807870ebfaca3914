#!/bin/bash
# one task per node; task 0 = ray head + vllm serve, task 1 = ray worker
IP=$(hostname -I | awk '{print $1}')
HEAD_NODE=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
HEAD_IP=$(getent hosts "$HEAD_NODE" | awk '{print $1}')
export VLLM_HOST_IP=$IP
export NCCL_SOCKET_IFNAME=ens10f0np0 GLOO_SOCKET_IFNAME=ens10f0np0
if [ "$SLURM_PROCID" -eq 0 ]; then
  echo "[launch.sh] SLURM_PROCID=0 host=$(hostname -s) ip=$IP starting ray head"
  ray start --head --port=6379 --node-ip-address="$IP" --num-gpus=4 --disable-usage-stats
  until [ "$(python -c 'import ray; ray.init(address="auto", logging_level="ERROR"); print(len([n for n in ray.nodes() if n["Alive"]]))' 2>/dev/null)" = "2" ]; do
    echo "[launch.sh] waiting for ray nodes: $(ray list nodes 2>/dev/null | grep -c ALIVE)/2"; sleep 5
  done
  ray status
  echo "[launch.sh] starting: vllm serve /lustre/shared/models/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b --tensor-parallel-size 4 --pipeline-parallel-size 2 --distributed-executor-backend ray --max-model-len 65536 --gpu-memory-utilization 0.9 --port 8000"
  vllm serve /lustre/shared/models/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b --tensor-parallel-size 4 --pipeline-parallel-size 2 \
       --distributed-executor-backend ray --max-model-len 65536 --gpu-memory-utilization 0.9 --port 8000
  rc=$?; echo "[launch.sh] vllm serve exited with status $rc"; exit $rc
else
  echo "[launch.sh] SLURM_PROCID=$SLURM_PROCID host=$(hostname -s) ip=$IP joining ray head $HEAD_IP:6379 in 10s"
  sleep 10
  ray start --address="$HEAD_IP:6379" --node-ip-address="$IP" --num-gpus=4 --block
fi
