#!/bin/bash
# run by on-call 2025-10-21 ~09:55Z; llama-405b never became ready after the 2.4.1 chart upgrade
ns=inference
oc get pods -n $ns -o wide > k8s/get-pods-wide.txt
oc get events -n $ns --sort-by=.lastTimestamp > k8s/events-inference.txt
oc get lws vllm-llama405 -n $ns -o yaml > k8s/lws-vllm-llama405.yaml
oc describe pod vllm-llama405-0-1 -n $ns > k8s/describe-pod-vllm-llama405-0-1.txt
oc logs vllm-llama405-0 -n $ns --timestamps > logs/vllm-llama405-0.log
oc logs vllm-llama405-0 -n $ns --timestamps --previous > logs/vllm-llama405-0.previous.log
oc logs vllm-llama405-0-1 -n $ns --timestamps > logs/vllm-llama405-0-1.log 2>&1 || true   # 'container "vllm-worker" in pod "vllm-llama405-0-1" is waiting to start: trying and failing to pull image'
