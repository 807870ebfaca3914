#!/usr/bin/env bash
set -uo pipefail
echo "[entrypoint] vllm-k3-agents ${IMAGE_VERSION:-2026.10.1} (base vllm/vllm-openai:kimi-k3, built ${BUILD_TS:-unknown} by ${BUILD_RUNNER:-unknown})"
echo "[entrypoint] rendering tool schemas from ${AGENTS_TOOLS_DIR} ($(ls ${AGENTS_TOOLS_DIR} | wc -l) files) -> /run/agents/tools.json"
python3 -m agents_toolkit.render --src "${AGENTS_TOOLS_DIR}" --out /run/agents/tools.json || exit 3
echo "[entrypoint] HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-0} VLLM_LOGGING_LEVEL=${VLLM_LOGGING_LEVEL:-INFO} NCCL_DEBUG=${NCCL_DEBUG:-}"
echo "[entrypoint] exec vllm serve $*"
start=$(date +%s)
vllm serve "$@"
rc=$?
echo "[entrypoint] vllm exited with status ${rc} after $(( $(date +%s) - start ))s; sleeping 2s so the log shipper can flush"
sleep 2
echo "[entrypoint] exit ${rc}"
exit ${rc}
