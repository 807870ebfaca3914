#!/bin/bash
# capacity sweep for kimi-k3; each run is bounded by `timeout` so a stuck client cannot hold the allocation
B="vllm bench serve --backend vllm --host 127.0.0.1 --port 8000 --endpoint /v1/completions --model kimi-k3 \
   --tokenizer /lustre/models/moonshotai/Kimi-K3 --trust-remote-code --dataset-name random --ignore-eos \
   --save-result --result-dir bench/results --percentile-metrics ttft,tpot,itl --metric-percentiles 99"
warmup() { vllm bench serve --backend vllm --host 127.0.0.1 --port 8000 --endpoint /v1/completions --model kimi-k3 \
   --tokenizer /lustre/models/moonshotai/Kimi-K3 --trust-remote-code --dataset-name random --random-input-len 1024 \
   --random-output-len 128 --num-prompts 16 --max-concurrency 4 > /dev/null 2>&1; }
run() { name=$1; to=$2; shift 2; echo "$(date --iso-8601=seconds) $name ... -> bench/$name.log"; \
        timeout $to $B "$@" > bench/$name.log 2>&1; echo "$(date --iso-8601=seconds) $name exit=$?"; }
warmup
run run-01-c32     1800 --max-concurrency 32  --num-prompts 200 --random-input-len 8192    --random-output-len 1024
run run-02-c128    1800 --max-concurrency 128 --num-prompts 400 --random-input-len 32768   --random-output-len 1024
run run-03-c512    2400 --max-concurrency 512 --num-prompts 600 --random-input-len 65536   --random-output-len 2048
run run-04-longctx-c8 600 --max-concurrency 8 --num-prompts 48  --random-input-len 1040000 --random-output-len 512 --random-range-ratio 0.02
# post-checks (health, one small completion, metrics) follow
