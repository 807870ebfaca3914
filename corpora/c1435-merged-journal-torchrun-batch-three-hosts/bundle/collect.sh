#!/bin/bash
# how journal-merged-sxm-c3-07-09.txt was produced (run from bastion, 2026-11-05 03:05 UTC)
for h in sxm-c3-07 sxm-c3-08 sxm-c3-09; do
  ssh $h sudo journalctl -o short-iso --since '2026-11-05 01:00' --until '2026-11-05 03:00' \
    | grep -Ev 'systemd-resolved|chronyd|snapd|rsyslogd|nvidia-persistenced|systemd-timesyncd'
done | sort -s -k1,1 > journal-merged-sxm-c3-07-09.txt
