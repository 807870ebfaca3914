#!/usr/bin/env python3
# /home/svc-llm/bin/preflight.py - prints the stack versions seen by each task
import torch, vllm
print(f"torch {torch.__version__} nccl {torch.cuda.nccl.version()} vllm {vllm.__version__} cuda {torch.cuda.is_available()} devices {torch.cuda.device_count()}", flush=True)
