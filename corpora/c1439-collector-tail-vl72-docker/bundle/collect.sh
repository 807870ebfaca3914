#!/bin/bash
# support bundle collector v0.4 (platform team)
C=vllm-vl72
mkdir -p out/host out/metrics
docker inspect $C > out/docker-inspect-$C.json
docker logs --timestamps --tail 450 $C > out/docker-logs-tail.txt 2>&1
grep -h "Sep 14" /var/log/kern.log > out/host/kern.log
curl -s "http://prom.infra:9090/api/v1/query_range?query=container_memory_working_set_bytes{name=\"$C\"}&start=2026-09-14T06:05:00Z&end=2026-09-14T09:05:00Z&step=300" | ./prom2csv > out/metrics/container_memory_working_set.csv
