#!/bin/bash
# /usr/local/sbin/k3-image-refresh.sh  (ExecStart of k3-image-refresh.service)
set -euo pipefail
IMG=vllm/vllm-openai:kimi-k3
old=$(docker image inspect --format '{{index .RepoDigests 0}}' "$IMG" 2>/dev/null || echo none)
echo "old digest: $old"
docker pull "$IMG"
new=$(docker image inspect --format '{{index .RepoDigests 0}}' "$IMG")
ver=$(docker image inspect --format '{{index .Config.Labels "org.opencontainers.image.version"}}' "$IMG")
echo "new digest: $new (image label org.opencontainers.image.version=$ver)"
if [ "$old" != "$new" ]; then
  echo "digest changed, running: systemctl restart vllm-k3.service"
  systemctl restart vllm-k3.service
fi
