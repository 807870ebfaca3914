#!/usr/bin/env bash
# k3 max-num-seqs sweep -- one container per config, bench, stop, next
set -uo pipefail
IMAGE=vllm/vllm-openai:kimi-k3
CONFIGS=("64" "128")
LOG=sweep-k3-maxseqs-$(date -u +%Y%m%d).log
ts() { date -u '+%Y-%m-%d %H:%M:%S'; }
log() { echo "[$(ts)] $*" | tee -a "$LOG"; }
current=""
on_int() {
  log "caught SIGINT - stopping ${current} and aborting sweep (docker stop -t 60)"
  docker stop -t 60 "${current}" | tee -a "$LOG"
  log "sweep aborted by user after ${done_n}/${#CONFIGS[@]} configs; completed: ${done_list}"
  exit 130
}
trap on_int INT
done_n=0; done_list=""
for i in "${!CONFIGS[@]}"; do
  n=$((i+1)); seqs=${CONFIGS[$i]}; current=k3-sweep-c$n
  log "=== config c$n ($n/${#CONFIGS[@]}): --max-num-seqs $seqs ==="
  cid=$(docker run -d --name "$current" --runtime nvidia --gpus all --ipc=host --network host --shm-size 64g \
        --ulimit memlock=-1 -v /models:/models -e HF_HOME=/models/hf -e HF_HUB_OFFLINE=1 \
        "$IMAGE" moonshotai/Kimi-K3 --trust-remote-code --served-model-name kimi-k3 \
        --tensor-parallel-size 8 --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided \
        --enable-prefix-caching --max-model-len 262144 --gpu-memory-utilization 0.92 \
        --max-num-batched-tokens 8192 --max-num-seqs "$seqs" --disable-uvicorn-access-log --disable-log-requests)
  log "started container $current (${cid:0:12})"
  t_start=$(date +%s); n_poll=0
  until curl -sf http://127.0.0.1:8000/health >/dev/null; do
    sleep 10; n_poll=$((n_poll+1))
    (( n_poll % 6 == 1 )) && log "waiting for http://127.0.0.1:8000/health ($(( $(date +%s) - t_start ))s elapsed)"
  done
  log "server ready after $(( $(date +%s) - t_start ))s"
  vllm bench serve --backend openai-chat --endpoint /v1/chat/completions --model kimi-k3 \
     --tokenizer moonshotai/Kimi-K3 --trust-remote-code --dataset-name random --random-input-len 8192 \
     --random-output-len 1024 --num-prompts 960 --max-concurrency 64 --ignore-eos \
     --save-result --result-dir results/k3-maxseqs --result-filename c$n.json 2>&1 | tee -a "$LOG"
  log "results saved to results/k3-maxseqs/c$n.json"; log "cooldown 35s"; sleep 35
  log "stopping $current (docker stop -t 60)"; docker stop -t 60 "$current" | tee -a "$LOG"
  done_n=$n; done_list="${done_list} c$n (results/k3-maxseqs/c$n.json)"
done
