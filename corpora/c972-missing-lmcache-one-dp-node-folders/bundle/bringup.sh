#!/bin/bash
# Qwen3-Coder-480B wide-EP with LMCache CPU offload: DP=4 (one engine per node), TP=8, EP=32.
# Started from the jump host; each node writes ~/vllm-logs/serve-$(date +%Y%m%d).log, copied into <hostname>/ afterwards.
NODES=(gpu-c-07 gpu-c-08 gpu-c-09 gpu-c-10)
COMMON="--tensor-parallel-size 8 --data-parallel-size 4 --data-parallel-size-local 1 \
  --data-parallel-address 10.44.3.17 --data-parallel-rpc-port 13345 --enable-expert-parallel \
  --max-model-len 262144 --gpu-memory-utilization 0.90 --enable-prefix-caching \
  --kv-transfer-config '{"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"}'"
for i in "${!NODES[@]}"; do
  EXTRA=""
  [ "$i" -gt 0 ] && EXTRA="--headless"
  [ "$i" -eq 0 ] && EXTRA="--served-model-name qwen3-coder --enable-auto-tool-choice --tool-call-parser qwen3_coder"
  ssh "${NODES[$i]}" "source /opt/venvs/vllm-lmc/bin/activate; export LMCACHE_LOCAL_CPU=True LMCACHE_MAX_LOCAL_CPU_SIZE=40 LMCACHE_CHUNK_SIZE=256 \
     GLOO_SOCKET_IFNAME=bond0 NCCL_SOCKET_IFNAME=bond0; \
     nohup vllm serve Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 $COMMON --data-parallel-start-rank $i $EXTRA > ~/vllm-logs/serve-\$(date +%Y%m%d).log 2>&1 &"
done
