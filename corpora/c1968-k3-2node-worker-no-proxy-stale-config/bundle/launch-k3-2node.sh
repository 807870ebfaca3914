#!/usr/bin/env bash
# launch-k3-2node.sh -- start Kimi K3 on hgx-k3-01 (head) + hgx-k3-02 (headless), TP=8 x PP=2
# usage: ./launch-k3-2node.sh            (run on the head)
set -euo pipefail

HEAD=hgx-k3-01; HEAD_IP=10.52.3.21
WORKER=hgx-k3-02; WORKER_IP=10.52.3.22
IMAGE=vllm/vllm-openai:kimi-k3
MODEL=moonshotai/Kimi-K3
PORT=29511

# site env (HF token, proxies) lives in /etc/vllm/k3.env on the head
ENV_FILE=/etc/vllm/k3.env

COMMON=(--gpus all --ipc=host --network=host --shm-size=64g --ulimit memlock=-1
        -v /data/hf:/data/hf -e HF_HOME=/data/hf -e NO_COLOR=1
        -e NCCL_IB_HCA=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11
        -e NCCL_SOCKET_IFNAME=ens21f0np0 -e GLOO_SOCKET_IFNAME=ens21f0np0)

SERVE=(vllm serve "$MODEL" --trust-remote-code
       --tensor-parallel-size 8 --pipeline-parallel-size 2
       --nnodes 2 --master-addr "$HEAD_IP" --master-port "$PORT"
       --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided
       --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.9
       --served-model-name kimi-k3 --enable-auto-tool-choice
       --tool-call-parser kimi_k3 --reasoning-parser kimi_k3)

# forward a few variables to the worker (ssh does not carry the env file)
fwd() { for v in "$@"; do [[ -n "${!v:-}" ]] && printf -- '-e %q ' "$v=${!v}"; done; }
set -a; source "$ENV_FILE"; set +a

docker rm -f vllm-k3 >/dev/null 2>&1 || true
ssh "$WORKER" 'docker rm -f vllm-k3 >/dev/null 2>&1 || true'

docker run -d --name vllm-k3 --env-file "$ENV_FILE" -e VLLM_HOST_IP="$HEAD_IP" "${COMMON[@]}" "$IMAGE" \
    "${SERVE[@]}" --node-rank 0
sleep 3
ssh "$WORKER" "docker run -d --name vllm-k3 $(fwd HF_TOKEN) -e VLLM_HOST_IP=$WORKER_IP ${COMMON[*]} $IMAGE ${SERVE[*]} --node-rank 1 --headless"
echo "started; follow with: pdsh -w hgx-k3-0[1-2] docker logs -f vllm-k3"
