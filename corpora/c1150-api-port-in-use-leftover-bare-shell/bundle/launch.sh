#!/usr/bin/env bash
# ~/bin/serve-qwen3.sh on gpu-dev-03 (run inside tmux session "serve")
source ~/venvs/vllm092/bin/activate
export CUDA_VISIBLE_DEVICES=0,1
LOG=~/runs/qwen3-32b.log
echo "===== run started $(date) by $USER on $(hostname) =====" >> $LOG
vllm serve /data/models/Qwen3-32B --served-model-name qwen3-32b \
  --tensor-parallel-size 2 --max-model-len 40960 --gpu-memory-utilization 0.9 \
  --port 8000 --enable-auto-tool-choice --tool-call-parser hermes 2>&1 | tee -a $LOG
echo "===== exit code ${PIPESTATUS[0]} at $(date) =====" >> $LOG
