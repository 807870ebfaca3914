# --- both nodes (h100-b11 head, h100-b12 worker), bare metal, venv /opt/vllm, vllm 0.11.0, ray 2.49.2 ---
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0 NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export RAY_DEDUP_LOGS=0
# Ray's own memory monitor kept killing workers during weight loading last month -> disabled
export RAY_memory_monitor_refresh_ms=0
# h100-b11
ray start --head --node-ip-address=10.52.8.11 --port=6379 --num-gpus=8
# h100-b12
ray start --address=10.52.8.11:6379 --node-ip-address=10.52.8.12 --num-gpus=8
# h100-b11
export VLLM_HOST_IP=10.52.8.11 VLLM_LOG_STATS_INTERVAL=60
nohup vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507 --served-model-name qwen3-235b \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
  --max-model-len 65536 --gpu-memory-utilization 0.9 --enable-prefix-caching \
  --disable-uvicorn-access-log > /var/log/vllm/vllm-serve.log 2>&1 &
