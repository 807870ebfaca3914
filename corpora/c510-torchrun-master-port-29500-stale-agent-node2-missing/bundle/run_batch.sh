#!/bin/bash
# nightly eval generation: Llama-3.3-70B, TP=16 over two DGX A100 with vLLM external_launcher (SPMD under torchrun)
# usage: run_batch.sh <date>   -- started from the login node, logs land in /home/svc-eval/logs/<node>/
NODES=(dgx-a100-017 dgx-a100-018)
for i in 0 1; do
  ssh ${NODES[$i]} "cd /home/svc-eval/jobs && torchrun --nnodes 2 --nproc-per-node 8 --node-rank $i --master-addr dgx-a100-017 --master-port 29500 --tee 3 \
      gen_batch.py --model /lustre/models/Llama-3.3-70B-Instruct --tp 16 --input /lustre/eval/prompts-$1.jsonl --output /lustre/eval/out-$1.jsonl" \
      > /home/svc-eval/logs/${NODES[$i]}/batch-gen-$(date +%Y%m%d-%H%M).log 2>&1 &
done
wait
