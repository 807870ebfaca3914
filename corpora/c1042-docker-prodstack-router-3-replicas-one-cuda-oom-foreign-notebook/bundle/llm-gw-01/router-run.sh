#!/bin/bash
# production-stack router in front of the three llama-3.3-70b replicas (static discovery)
docker run -d --name vllm-router --restart unless-stopped -p 8080:8000 \
  lmcache/lmstack-router:v0.1.6 \
  --host 0.0.0.0 --port 8000 \
  --service-discovery static \
  --static-backends "http://10.31.4.21:8000,http://10.31.4.22:8000,http://10.31.4.23:8000" \
  --static-models "llama-3.3-70b,llama-3.3-70b,llama-3.3-70b" \
  --routing-logic roundrobin \
  --engine-stats-interval 30 --request-stats-window 60
