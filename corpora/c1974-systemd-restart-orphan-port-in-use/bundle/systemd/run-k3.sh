#!/bin/bash
# /opt/k3/bin/run-k3.sh  (deployed by ansible role k3-serve, rev 2026-10-30)
set -euo pipefail
echo "run-k3: loading /etc/k3/serve.env, args from /etc/k3/serve.args"
source /opt/k3/venv/bin/activate
mapfile -t ARGS < <(grep -v '^#' /etc/k3/serve.args | sed '/^$/d')
mkdir -p /var/log/k3
echo "run-k3: starting vllm serve /srv/models/Kimi-K3 (stdout -> tee -a /var/log/k3/vllm.log)"
vllm serve /srv/models/Kimi-K3 "${ARGS[@]}" 2>&1 | tee -a /var/log/k3/vllm.log
