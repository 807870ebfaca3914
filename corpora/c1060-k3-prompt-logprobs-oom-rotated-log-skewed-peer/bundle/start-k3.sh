# /opt/vllm/start-k3.sh, run by hand (nohup) on both nodes; NODE_RANK=0 on h200-sjc-05, 1 on h200-sjc-06
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 NCCL_SOCKET_IFNAME=bond0 GLOO_SOCKET_IFNAME=bond0
export UCX_TLS=rc,cuda_copy HF_HOME=/models/hf
EXTRA=$([ "$NODE_RANK" = 0 ] && echo "--port 8000" || echo "--headless")
nohup /opt/vllm-0.27.2/bin/vllm serve moonshotai/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
    --tensor-parallel-size 8 --pipeline-parallel-size 2 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
    --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 --max-logprobs 20 \
    --disable-uvicorn-access-log --nnodes 2 --node-rank $NODE_RANK --master-addr 10.88.2.5 --master-port 29533 $EXTRA \
    >> /var/log/vllm/vllm.log 2>&1 &
