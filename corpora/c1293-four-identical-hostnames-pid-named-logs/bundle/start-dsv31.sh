#!/bin/bash
# start-dsv31.sh -- run on every node with NODE_RANK set by hand (see the wiki table)
source /home/svc/miniforge3/bin/activate vllm016
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export VLLM_LOG_STATS_INTERVAL=120 VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS=300
EXTRA=""
if [ "$NODE_RANK" != "0" ]; then EXTRA="--headless"; fi
nohup vllm serve /mnt/weights/DeepSeek-V3.1 --served-model-name dsv31 --trust-remote-code \
  --tensor-parallel-size 8 --pipeline-parallel-size 4 --nnodes 4 --node-rank $NODE_RANK \
  --master-addr 10.91.4.24 --master-port 29777 --max-model-len 65536 --gpu-memory-utilization 0.9 \
  --enable-prefix-caching --enable-auto-tool-choice --tool-call-parser deepseek_v31 $EXTRA \
  > /shared/logs/vllm-serve.$(hostname).$$.log 2>&1 &
