# both nodes (p5en.48xlarge, 8x H200, 16x EFA), same image
IMG=123456789012.dkr.ecr.us-east-2.amazonaws.com/llm/vllm-efa:0.11.2-ofi1.16.3
docker run -d --name ray-node --gpus all --network host --ipc host --shm-size 64g --ulimit memlock=-1 \
  --device /dev/infiniband/uverbs0 ... --device /dev/infiniband/uverbs15 \
  -v /opt/amazon/efa:/opt/amazon/efa:ro -v /fsx/models:/root/.cache/huggingface \
  -e NCCL_DEBUG=INFO -e NCCL_NET=OFI -e NCCL_SOCKET_IFNAME=enp71s0 -e FI_PROVIDER=efa -e FI_EFA_USE_DEVICE_RDMA=1 \
  -e LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib:/opt/amazon/efa/lib:/usr/local/nvidia/lib64 \
  $IMG sleep infinity
# head (ip-10-42-17-88):   docker exec ray-node ray start --head --port 6379 --dashboard-host 0.0.0.0
# worker (ip-10-42-19-203): docker exec ray-node ray start --address 10.42.17.88:6379
# then on head:  docker exec -it ray-node vllm serve deepseek-ai/DeepSeek-V3.1 --tensor-parallel-size 8 --pipeline-parallel-size 2 \
#                  --distributed-executor-backend ray --trust-remote-code --max-model-len 65536 --served-model-name dsv31 2>&1 | tee vllm-serve.log
