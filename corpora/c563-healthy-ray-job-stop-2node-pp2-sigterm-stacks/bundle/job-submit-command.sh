# submitted 2025-04-22 13:05 UTC by ml-platform (capacity test of 405B on 2 nodes; to be stopped after the test window)
ray job submit --address http://10.31.0.11:8265 --submission-id raysubmit_Yc2XJb8mFq7NsP4k \
  --runtime-env-json '{"env_vars": {"HF_HUB_OFFLINE": "1", "NCCL_SOCKET_IFNAME": "ens1f0", "VLLM_USE_V1": "1"}}' \
  -- vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 --served-model-name llama-405b \
     --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
     --max-model-len 32768 --gpu-memory-utilization 0.92 --disable-log-requests
