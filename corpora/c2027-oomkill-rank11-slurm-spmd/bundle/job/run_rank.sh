#!/bin/bash
# maps Slurm task ids to torch.distributed env for vLLM's external_launcher
export RANK=$SLURM_PROCID
export LOCAL_RANK=$SLURM_LOCALID
export WORLD_SIZE=$SLURM_NTASKS
echo "[run_rank] rank=$RANK local_rank=$LOCAL_RANK host=$(hostname -s) pid=$$ slurm_job=$SLURM_JOB_ID step=$SLURM_JOB_ID.$SLURM_STEP_ID"
exec "$@"
