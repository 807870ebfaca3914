#!/bin/bash
# P/D proxy (based on vllm tests/v1/kv_connector/nixl_integration/toy_proxy_server.py, with a retry patch), runs on hgx-b300-p11
docker run -d --name pd-proxy --network host registry.internal/ml/pd-proxy:2026.10.3 \
  --port 9000 --prefiller-hosts 10.72.3.11 --prefiller-ports 8100 --decoder-hosts 10.72.3.14 --decoder-ports 8200 \
  --decode-retries 1 --timeout 600
