#!/bin/bash
# run from the bastion after the 08:13 page
for h in gpu-c06 gpu-c07; do
  ssh $h 'journalctl -o json --since "2026-09-08 06:00" --until "2026-09-08 08:20" -u vllm.service -u ssh.service -u cron.service -u systemd-logind.service -k _COMM=sudo'
done | sort -t'"' -k4,4n > journal-export.json
ssh gpu-c07 systemctl cat vllm.service > vllm.service.txt
