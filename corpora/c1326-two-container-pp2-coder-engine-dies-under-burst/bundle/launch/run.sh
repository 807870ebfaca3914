# launch/run.sh -- same script on both hosts; NODE_RANK=0 on gpu-h11, 1 on gpu-h12
# llm-overlay is an attachable swarm overlay; IB devices are passed through for NCCL.
NODE_RANK=${NODE_RANK:?}
IP=10.0.9.1$((NODE_RANK+1))
EXTRA=""
[ "$NODE_RANK" = 0 ] && EXTRA="--host 0.0.0.0 --enable-auto-tool-choice --tool-call-parser qwen3_coder" || EXTRA="--headless"
docker run -d --name vllm-coder --runtime nvidia --gpus all --network llm-overlay --ip $IP \
  --ipc host --shm-size 64g --cap-add IPC_LOCK --ulimit memlock=-1 --device /dev/infiniband \
  -v /srv/hf:/root/.cache/huggingface -v /srv/vllm-cache:/root/.cache/vllm \
  -e NCCL_DEBUG=INFO -e NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP -e NCCL_SOCKET_IFNAME=eth0 -e GLOO_SOCKET_IFNAME=eth0 \
  -e NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9 -e VLLM_HOST_IP=$IP \
  --log-opt max-size=500m --log-opt max-file=3 \
  vllm/vllm-openai:v0.20.1 Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 \
  --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel \
  --nnodes 2 --node-rank $NODE_RANK --master-addr 10.0.9.11 \
  --max-model-len 131072 --gpu-memory-utilization 0.93 --max-num-seqs 128 $EXTRA
