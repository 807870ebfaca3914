#!/bin/bash
# 3-node PP=3 x TP=8 Llama-3.1-405B (BF16), mp executor, no Ray. Start the headless nodes first.
MASTER=10.40.8.11
IMG=vllm/vllm-openai:v0.24.1
COMMON="meta-llama/Llama-3.1-405B-Instruct --tensor-parallel-size 8 --pipeline-parallel-size 3 --nnodes 3 --master-addr $MASTER --master-port 29501 --max-model-len 131072 --max-num-batched-tokens 131072 --max-num-seqs 64 --gpu-memory-utilization 0.90 --enable-prefix-caching"
RUN="docker run -d --name vllm --gpus all --network host --ipc host --shm-size 64g -v /nvme/hf:/root/.cache/huggingface -e NCCL_SOCKET_IFNAME=bond0 -e GLOO_SOCKET_IFNAME=bond0 $IMG"
ssh gpu-h100-a03 "$RUN $COMMON --node-rank 2 --headless"
ssh gpu-h100-a02 "$RUN $COMMON --node-rank 1 --headless"
ssh gpu-h100-a01 "$RUN $COMMON --node-rank 0 --served-model-name llama-405b --host 0.0.0.0 --port 8000"

# incident 2026-06-18 ~14:22Z: collected `docker logs -t vllm` from a01 and a02 only;
# gpu-h100-a03 was reimaged by the fleet job at 14:40 before its logs were pulled.
