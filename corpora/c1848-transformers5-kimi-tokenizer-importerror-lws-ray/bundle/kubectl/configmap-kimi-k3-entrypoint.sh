#!/bin/bash
# configmap kimi-k3-entrypoint / entrypoint.sh
ROLE="$1"
echo "[entrypoint] role=$ROLE group_size=${LWS_GROUP_SIZE} restart=${RESTART_COUNT:-?} image=${IMAGE_REF} node=${NODE_NAME}"
if [ "$ROLE" = "leader" ]; then
  bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader --ray_cluster_size="$LWS_GROUP_SIZE" --num-gpus=8 --disable-usage-stats
  vllm serve /models/Kimi-K3 --served-model-name kimi-k3 --trust-remote-code \
       --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray \
       --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
       --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.90 \
       --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3 \
       --host 0.0.0.0 --port 8000
  rc=$?
  echo "[entrypoint] vllm serve exited with code $rc, stopping ray"
  ray stop
  exit $rc
else
  bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker --ray_address="$LWS_LEADER_ADDRESS" --num-gpus=8 --disable-usage-stats
fi
