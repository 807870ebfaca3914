#!/bin/bash
# pulled by on-call 2026-11-18 21:24 UTC from the ops jump host (aws-cli/2.31.9)
# log group /inference/kimi-k3 , stream kimi-k3-prod (docker awslogs driver on i-0c5d1e7f39a2b8461)
set -euo pipefail
G=/inference/kimi-k3
S=kimi-k3-prod
START=$(date -d '2026-11-18 20:40:00Z' +%s000)
OUT=get-log-events_kimi-k3-prod.json
: > "$OUT"
tok=""
while :; do
  if [ -z "$tok" ]; then
    resp=$(aws logs get-log-events --region us-west-2 --log-group-name "$G" --log-stream-name "$S" \
           --start-time "$START" --start-from-head --limit 500 --output json)
  else
    resp=$(aws logs get-log-events --region us-west-2 --log-group-name "$G" --log-stream-name "$S" \
           --next-token "$tok" --start-from-head --limit 500 --output json)
  fi
  echo "$resp" >> "$OUT"
  new=$(echo "$resp" | jq -r .nextForwardToken)
  [ "$new" = "$tok" ] && break
  [ "$(echo "$resp" | jq '.events|length')" = "0" ] && break
  tok=$new
done
