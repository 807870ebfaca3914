# gpu-a14 (head)
docker run -d --name vllm-k3-head --gpus all --network host --ipc host --ulimit memlock=-1 --device /dev/infiniband --env-file /etc/k3/nccl.env -v /data/hf:/root/.cache/huggingface vllm/vllm-openai:kimi-k3 \
  bash -c 'ray start --head --port 6379 --num-gpus 8 && vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching --max-model-len 524288 --gpu-memory-utilization 0.9'

# gpu-a15 (worker)
docker run -d --name vllm-k3-worker --gpus all --network host --ipc host --ulimit memlock=-1 --device /dev/infiniband --env-file /etc/k3/nccl.env -v /data/hf:/root/.cache/huggingface vllm/vllm-openai:kimi-k3 \
  bash -c 'ray start --address 10.70.0.14:6379 --num-gpus 8 --block'

# /etc/k3/nccl.env (both nodes)
NCCL_DEBUG=INFO
NCCL_DEBUG_SUBSYS=INIT,NET
NCCL_DEBUG_FILE=/var/log/nccl/nccl.%h.%p.log
NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7
NCCL_IB_GID_INDEX=3
NCCL_SOCKET_IFNAME=bond0
UCX_TLS=rc,cuda_copy
HF_HUB_OFFLINE=1
