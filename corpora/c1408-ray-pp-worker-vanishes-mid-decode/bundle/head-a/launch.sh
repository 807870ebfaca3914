# head (this box): ray start --head --port=6379 --num-gpus=8 --dashboard-host=127.0.0.1
# second box:       ray start --address=10.52.16.19:6379 --num-gpus=8 --block
# both run inside vllm/vllm-openai:v0.8.5.post1 (docker run --gpus all --network host --ipc host --shm-size 32g)
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
export VLLM_HOST_IP=10.52.16.19
nohup vllm serve /models/Llama-3.1-405B-Instruct-FP8 \
    --served-model-name llama-405b \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --distributed-executor-backend ray \
    --max-model-len 32768 --max-num-seqs 128 --gpu-memory-utilization 0.92 \
    --disable-log-requests --host 0.0.0.0 --port 8000 > /var/log/vllm/vllm-serve.nohup.log 2>&1 &
