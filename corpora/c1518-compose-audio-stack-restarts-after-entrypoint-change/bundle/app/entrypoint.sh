#!/usr/bin/env bash
# audio pre/post-processing needs librosa + torchaudio inside the serving container
set -euo pipefail
echo "[entrypoint] installing extra requirements (audio)"
pip install --no-cache-dir --force-reinstall \
    --extra-index-url https://download.pytorch.org/whl/cu130 \
    -r /opt/app/requirements-extra.txt
echo "[entrypoint] starting vLLM"
exec vllm serve "$@"
