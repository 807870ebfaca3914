#!/usr/bin/env bash
# run_sweep.sh - start vLLM, run benchmark_serving.py for each request rate, stop the server.
set -euo pipefail
MODEL=${MODEL:-meta-llama/Llama-3.1-70B-Instruct}
OUT=results/$(date +%F)_a100x4_llama31-70b_tp4
RATES=${RATES:-"4 inf"}
mkdir -p "$OUT"
log() { echo "[$(date '+%F %T')] $*" | tee -a "$OUT/sweep.log"; }

log "host=$(hostname) commit=$(git rev-parse --short HEAD) vllm=$(python -c 'import vllm;print(vllm.__version__)') torch=$(python -c 'import torch;print(torch.__version__)')"
CMD="vllm serve $MODEL --tensor-parallel-size 4 --max-model-len 16384 --gpu-memory-utilization 0.92 --download-dir /data/hf --disable-log-requests --host 0.0.0.0 --port 8000"
log "starting server: $CMD"
$CMD > "$OUT/server.log" 2>&1 &
SERVER_PID=$!
log "server pid $SERVER_PID, log -> $OUT/server.log"
t0=$(date +%s)
until curl -sf localhost:8000/health >/dev/null; do sleep 5; done
log "server healthy after $(( $(date +%s) - t0 )) s"

for r in $RATES; do
  sleep 40
  log "rate=$r num_prompts=100 -> bench_rate$r.txt"
  python benchmarks/benchmark_serving.py --backend vllm --model "$MODEL" \
      --dataset-name sharegpt --dataset-path /data/datasets/ShareGPT_V3_unfiltered_cleaned_split.json \
      --num-prompts 100 --request-rate "$r" --percentile-metrics ttft,tpot,itl --metric-percentiles 50,99 \
      --save-result --result-dir "$OUT" --metadata gpu=A100-SXM4-80GBx4 tp=4 \
      > "$OUT/bench_rate$r.txt" 2>&1
  log "rate=$r done (exit $?)"
done

log "sleeping 300 s for nvidia-smi power samples (see nvsmi_dmon.csv, not committed)"
sleep 300
log "stopping server: kill -TERM $SERVER_PID"
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" && rc=0 || rc=$?
log "server exited, status $rc"
log "sweep finished"
