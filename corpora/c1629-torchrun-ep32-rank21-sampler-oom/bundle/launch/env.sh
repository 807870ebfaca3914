# sourced by run_batch.sh on every node
export LOGLEVEL=INFO
export PYTHONFAULTHANDLER=1
export NCCL_DEBUG=WARN
export NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
export NCCL_SOCKET_IFNAME=eth0
export GLOO_SOCKET_IFNAME=eth0
export VLLM_ENABLE_V1_MULTIPROCESSING=0       # required for distributed_executor_backend=external_launcher
export VLLM_USE_FLASHINFER_SAMPLER=0          # flashinfer sampler gave non-reproducible samples across TP ranks in Jan
export HF_HUB_OFFLINE=1
export HF_HOME=/lustre/cache/hf
# export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
source /opt/venv/bin/activate    # torch 2.9.1+cu129, vllm 0.15.1
