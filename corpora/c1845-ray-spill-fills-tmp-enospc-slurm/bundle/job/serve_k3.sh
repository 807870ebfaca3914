#!/bin/bash
# started with: srun --overlap --jobid=884213 -w hpc-gpu041 -N1 -n1 --output=logs/k3-serve-%j.out bash job/serve_k3.sh
source /scratch/svc-llm/k3/venv/bin/activate
export HF_HOME=/scratch/svc-llm/hf VLLM_CACHE_ROOT=/tmp/vllm-cache-$USER RAY_ADDRESS=10.18.4.41:6379
for n in 1 2 3; do
  echo "[serve_k3] $(date -Is) attempt $n/3 on $(hostname) (SLURM_JOB_ID=$SLURM_JOB_ID)"
  echo "[serve_k3] ray status:"; ray status
  vllm serve moonshotai/Kimi-K3 --host 0.0.0.0 --port 8000 --trust-remote-code \
    --distributed-executor-backend ray --tensor-parallel-size 8 --pipeline-parallel-size 2 \
    --enable-expert-parallel --all2all-backend flashinfer_nvlink_one_sided --enable-prefix-caching \
    --max-model-len 1048576 --max-num-batched-tokens 16384 --gpu-memory-utilization 0.92 \
    --served-model-name kimi-k3 --enable-auto-tool-choice --tool-call-parser kimi_k3 --reasoning-parser kimi_k3
  rc=$?
  echo "[serve_k3] $(date -Is) vllm exited with status $rc (attempt $n/3)"
  [ $n -lt 3 ] && echo "[serve_k3] retrying in 20s" && sleep 20
done
echo "[serve_k3] $(date -Is) giving up after 3 attempts; leaving the Ray cluster up (head 10.18.4.41)"
