#!/bin/bash
# /shared/k3/postmortem.sh JOBID -- run on every node after the step ends
d=/shared/k3/pm/$1/$(hostname -s); mkdir -p "$d"
sudo dmesg > "$d/dmesg.txt"
{ echo '$ date -u'; date -u; echo '$ uptime'; uptime; echo '$ uptime -s'; uptime -s; } > "$d/uptime.txt"
{ echo '$ chronyc tracking'; chronyc tracking; echo '$ chronyc sources'; chronyc sources; } > "$d/chronyc.txt" 2>&1
nvidia-smi > "$d/nvidia-smi.txt" 2>&1
for i in 0 1 2 3 4 5 6 7; do nvidia-smi nvlink -s -i $i; done > "$d/nvlink-status.txt" 2>&1
echo "$(hostname -s) $(date -u +%FT%T.%3NZ) saved dmesg, uptime, chronyc, nvidia-smi to $d"
