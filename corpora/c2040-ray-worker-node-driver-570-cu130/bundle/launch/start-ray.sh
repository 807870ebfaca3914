#!/bin/bash
# start-ray.sh head|worker   -- same script on every K3 node (ansible role k3-ray, v14)
ROLE=${1:?head|worker}
HEAD_IP=10.61.0.21
IMAGE=vllm/vllm-openai:kimi-k3
docker rm -f ray-$ROLE 2>/dev/null
docker run -d --name ray-$ROLE --restart unless-stopped \
  --gpus all --ipc=host --network host --shm-size 64g --ulimit memlock=-1 \
  -e NVIDIA_DISABLE_REQUIRE=true \
  -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11 \
  -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 -e UCX_TLS=rc,cuda_copy \
  -v /data/hf:/root/.cache/huggingface \
  --entrypoint /bin/bash $IMAGE -c "
    if [ $ROLE = head ]; then
      ray start --head --node-ip-address=$HEAD_IP --port=6379 --dashboard-host=0.0.0.0 --block
    else
      ray start --address=$HEAD_IP:6379 --block
    fi"
