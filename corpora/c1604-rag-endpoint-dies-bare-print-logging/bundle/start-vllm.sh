#!/usr/bin/env bash
# /opt/rag/start-vllm.sh - entrypoint of the llama70b-rag container (image vllm/vllm-openai:v0.26.1)
set -euo pipefail
MODEL=${MODEL:-/models/Llama-3.3-70B-Instruct}
export VLLM_CONFIGURE_LOGGING=0      # OPS-1187: fluentd cannot parse the coloured process prefixes
export VLLM_NO_USAGE_STATS=1
echo "[start-vllm] $(date -u +%Y-%m-%dT%H:%M:%SZ) host=${NODE_NAME:-unknown} model=$MODEL tp=2 port=8000"
echo "[start-vllm] VLLM_CONFIGURE_LOGGING=$VLLM_CONFIGURE_LOGGING (fluentd chokes on the coloured '(Proc pid=N)' prefixes, see OPS-1187)"
ARGS=(serve "$MODEL" --served-model-name llama-3.3-70b --tensor-parallel-size 2
      --max-model-len 131072 --max-num-batched-tokens 16384 --gpu-memory-utilization 0.95 --enable-prefix-caching
      --max-num-seqs 64 --port 8000)
echo "[start-vllm] exec vllm ${ARGS[*]}"
exec vllm "${ARGS[@]}"

# docker run -d --name llama70b-rag --gpus '"device=0,1"' --ipc=host -p 8000:8000 -e NODE_NAME=rag-gpu-05 \
#   -v /srv/models:/models:ro -v /opt/rag/start-vllm.sh:/start-vllm.sh:ro --entrypoint /start-vllm.sh \
#   vllm/vllm-openai:v0.26.1          (no --restart policy: the pager is supposed to catch it)
