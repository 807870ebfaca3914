# both nodes: docker run (host network, IB devices), started by ansible play 'serve-kimi-k2' 2025-12-09 07:21 UTC
# h200-a08 (started first)
docker run -d --name vllm-worker --gpus all --network host --ipc host --ulimit memlock=-1 --device /dev/infiniband \
  -e NCCL_DEBUG=INFO -e NCCL_DEBUG_SUBSYS=INIT,NET -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -v /data/hf:/root/.cache/huggingface \
  vllm/vllm-openai:v0.12.0 --model moonshotai/Kimi-K2-Instruct --trust-remote-code --served-model-name kimi-k2 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 1 --master-addr 10.20.0.31 --master-port 29501 \
  --max-model-len 65536 --gpu-memory-utilization 0.9 --headless
# h200-a07
docker run -d --name vllm-head --gpus all --network host --ipc host --ulimit memlock=-1 --device /dev/infiniband \
  -e NCCL_DEBUG=INFO -e NCCL_DEBUG_SUBSYS=INIT,NET -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 -v /data/hf:/root/.cache/huggingface \
  vllm/vllm-openai:v0.12.0 --model moonshotai/Kimi-K2-Instruct --trust-remote-code --served-model-name kimi-k2 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 10.20.0.31 --master-port 29501 \
  --max-model-len 65536 --gpu-memory-utilization 0.9
# logs collected 2025-12-09 08:02 UTC with: docker logs -t vllm-head / docker logs -t vllm-worker
