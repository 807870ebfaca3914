# /etc/profile.d/nccl-fabric.sh  (same file on gpu-c01..c04, md5 9b1e0c55a2e7f3d4c6a18e0f4d7b2c91)
# NDR fabric, 8 rails. Bootstrap/OOB must stay off the IB ports and off container bridges.
export NCCL_SOCKET_IFNAME="^lo,docker,virbr"
export NCCL_IB_HCA=mlx5
export NCCL_IB_TIMEOUT=20
export UCX_TLS=rc,cuda_copy
