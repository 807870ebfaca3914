#!/usr/bin/env bash
# bench/run_bench.sh - concurrency sweep against a local vLLM server (random 2048 in / 512 out)
set -uo pipefail
OUT=bench/$(date +%F)_l40s-x4_qwen25-32b
MODEL=Qwen/Qwen2.5-32B-Instruct
mkdir -p "$OUT"
vllm serve $MODEL --tensor-parallel-size 4 --max-model-len 16384 --max-num-seqs 128 \
     --gpu-memory-utilization 0.9 --disable-log-requests --disable-uvicorn-access-log --host 0.0.0.0 > "$OUT/server.log" 2>&1 &
SRV=$!
until curl -sf localhost:8000/health > /dev/null; do sleep 5; done
nvidia-smi > "$OUT/nvidia-smi_before.txt"
for C in 16 64 128; do
  N=$(( C < 64 ? 300 : (C == 64 ? 600 : 1000) ))
  vllm bench serve --backend vllm --model $MODEL --dataset-name random \
      --random-input-len 2048 --random-output-len 512 --ignore-eos \
      --num-prompts $N --max-concurrency $C --percentile-metrics ttft,tpot,itl \
      --metric-percentiles 50,90,99 --save-result --save-detailed --result-dir "$OUT" \
      --result-filename c$C.json --metadata hw=L40Sx4 tp=4 > "$OUT/client_c$C.log" 2>&1
  echo "c$C exit=$?" >> "$OUT/exit_codes.txt"
  sleep 45
done
kill -TERM $SRV 2>/dev/null
wait $SRV; echo "server exit=$?" >> "$OUT/exit_codes.txt"
