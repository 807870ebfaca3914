#!/bin/bash
# on-call, 2025-09-24 ~13:30Z: agent team reports every tool call failing through agent-gw since the 12:40 rollout (deploy revision 14)
kubectl -n llm get pod qwen3-tools-7c9d8f6b54-kx2mw -o wide > k8s/pod-wide.txt
kubectl -n llm get deploy qwen3-tools -o yaml > k8s/deploy-qwen3-tools.yaml
kubectl -n llm logs qwen3-tools-7c9d8f6b54-kx2mw --timestamps --limit-bytes=40960 > logs/qwen3-tools-api.log   # keep the ticket attachment small
kubectl -n llm exec deploy/qwen3-tools -- sed -n '189,217p' /plugins/acme_qwen_tools.py | nl -ba -v189 > plugin-acme_qwen_tools-189-217.txt
kubectl -n agents logs deploy/agent-gw --since=40m | grep -i 'upstream' > logs/agent-gw-upstream-errors.txt
