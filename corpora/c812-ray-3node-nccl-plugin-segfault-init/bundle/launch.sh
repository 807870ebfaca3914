# ml-a100-01 (head):  ray start --head --node-ip-address 10.8.0.11 --num-gpus 4
# ml-a100-02/03:      ray start --address 10.8.0.11:6379 --node-ip-address <own ip> --num-gpus 4
export NCCL_DEBUG=WARN NCCL_SOCKET_IFNAME=ens1f0 GLOO_SOCKET_IFNAME=ens1f0 NCCL_IB_HCA=mlx5_0,mlx5_1
nohup vllm serve meta-llama/Llama-3.3-70B-Instruct --served-model-name llama-3.3-70b --tensor-parallel-size 4 --pipeline-parallel-size 3 \
    --distributed-executor-backend ray --max-model-len 32768 --gpu-memory-utilization 0.9 > ~/vllm-serve.log 2>&1 &
# bundle: 10.8.0.11/vllm-serve.log; /tmp/ray/session_latest/logs/{raylet.out,worker-*} from each node; dmesg from 10.8.0.13
