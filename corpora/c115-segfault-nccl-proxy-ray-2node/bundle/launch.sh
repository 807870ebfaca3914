# head   h20-ray-01 (10.31.4.11): ray start --head --port=6379 --dashboard-host=127.0.0.1
# worker h20-ray-02 (10.31.4.12): ray start --address=10.31.4.11:6379
export RAY_DEDUP_LOGS=0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
export NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
vllm serve deepseek-ai/DeepSeek-V3.1 --trust-remote-code --served-model-name dsv31 \
  --distributed-executor-backend ray --pipeline-parallel-size 2 --tensor-parallel-size 8 \
  --max-model-len 65536 --gpu-memory-utilization 0.9 --enable-prefix-caching 2>&1 | tee vllm-serve.log
