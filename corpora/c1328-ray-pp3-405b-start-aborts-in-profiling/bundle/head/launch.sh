# run on hgx-r5-n07 after `ray start --head` there and `ray start --address=10.18.5.27:6379` on the two workers
conda activate vllm   # vllm 0.11.0, torch 2.8.0+cu128, ray 2.49.2
export VLLM_HOST_IP=10.18.5.27
export NCCL_SOCKET_IFNAME=bond0
export GLOO_SOCKET_IFNAME=bond0
nohup vllm serve /mnt/models/meta-llama/Llama-3.1-405B-Instruct --served-model-name llama-405b \
    --tensor-parallel-size 8 --pipeline-parallel-size 3 --distributed-executor-backend ray \
    --max-model-len 32768 --gpu-memory-utilization 0.92 --host 0.0.0.0 --port 8080 > vllm-serve.log 2>&1 &
