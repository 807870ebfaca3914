#!/bin/bash
# /opt/scoring/run_shards.sh DATE -- nightly scoring, one independent vLLM instance per GPU,
# one input shard per rank; called by Airflow (BashOperator nightly_scoring.score_corpus)
set -u
DATE=$1
IN=/data/scoring/in/$DATE
OUT=/data/scoring/out/$DATE
LOGDIR=/data/scoring/logs/$DATE
mkdir -p "$OUT" "$LOGDIR"
log() { echo "[run_shards] $(date -Is) $*"; }

log "date=$DATE input=$IN out=$OUT"
for r in 0 1 2 3 4 5 6 7; do
  CUDA_VISIBLE_DEVICES=$r RANK=$r WORLD_SIZE=8 \
    /opt/scoring/venv/bin/python3 /opt/scoring/score.py \
      --model /models/Llama-3.1-8B-Instruct --in "$IN/part-0$r.jsonl" --out "$OUT/part-0$r.parquet" \
      --chunk 16384 --max-tokens 256 --logprobs 20 --prompt-logprobs 1 \
      > "$LOGDIR/shard-$r.log" 2>&1 &
  log "started rank $r pid $! on GPU $r -> $LOGDIR/shard-$r.log"
done
log "waiting for 8 ranks"
wait
log "all ranks finished"
