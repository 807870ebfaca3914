#!/bin/bash
# started on all four nodes at once:
#   pdsh -w gpu-h100-a0[1-4] 'bash /lustre/proj/synth/launch/run_batch.sh'
set -o pipefail
source /lustre/proj/synth/launch/env.sh
cd /lustre/proj/synth
LOG=/lustre/proj/synth/logs/$(hostname -s).log

torchrun --nnodes 4 --nproc-per-node 8 \
  --rdzv-backend c10d --rdzv-endpoint gpu-h100-a01:29400 --rdzv-id synth-0212 --rdzv-conf timeout=900 \
  --max-restarts 0 --tee 3 \
  offline_gen.py --prompts /lustre/proj/synth/prompts/v7.jsonl --chunk-size 2048 --max-tokens 2048 \
  2>&1 | tee ${LOG}
