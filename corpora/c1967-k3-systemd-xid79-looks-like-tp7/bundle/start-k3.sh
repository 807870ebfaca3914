#!/usr/bin/env bash
# /opt/k3/start-k3.sh -- one script for all K3 boxes (8x B300 / 8x H200 / 4x GB300 trays)
set -euo pipefail
echo "[start-k3] $(date -Iseconds) host=$(hostname -s) image=${IMAGE}"

# size TP from the GPUs the driver sees, so the same unit works on every SKU
if ! GPU_LIST=$(nvidia-smi -L); then
    echo "[start-k3] ERROR: nvidia-smi -L failed; not starting"
    exit 1
fi
NUM_GPUS=$(grep -c '^GPU ' <<<"${GPU_LIST}")
BUSIDS=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | tr '\n' ' ')
echo "[start-k3] nvidia-smi -L reports ${NUM_GPUS} GPU(s): ${BUSIDS}"

ARGS=(moonshotai/Kimi-K3 --trust-remote-code
      --tensor-parallel-size "${NUM_GPUS}"
      --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided
      --enable-prefix-caching --max-model-len 1048576 --gpu-memory-utilization 0.92
      --served-model-name kimi-k3 --enable-auto-tool-choice
      --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
      --host 0.0.0.0 --port 8000)

echo "[start-k3] exec podman run --name vllm-k3 ... vllm serve ${ARGS[0]} --tensor-parallel-size ${NUM_GPUS} --enable-expert-parallel --enable-prefix-caching --max-model-len 1048576"
exec /usr/bin/podman run --rm --name vllm-k3 --log-driver=passthrough \
    --device nvidia.com/gpu=all --ipc=host --network=host --shm-size=64g \
    --ulimit memlock=-1 -e NO_COLOR=1 -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 \
    -v /raid/models:/models:ro \
    "${IMAGE}" vllm serve "${ARGS[@]}"
