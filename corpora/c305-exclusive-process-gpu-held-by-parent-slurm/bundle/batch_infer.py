#!/usr/bin/env python
"""Offline batch inference for the eval set (rkoval)."""
import argparse, json, time
import torch
from vllm import LLM, SamplingParams


def log(msg):
    print(f"[batch_infer {time.strftime('%H:%M:%S', time.gmtime())}] {msg}", flush=True)


def describe_gpus():
    n = torch.cuda.device_count()
    name = torch.cuda.get_device_name(0)
    cap = torch.cuda.get_device_capability(0)
    free, _ = torch.cuda.mem_get_info(0)          # creates a CUDA context on GPU 0 in this process
    log(f"torch {torch.__version__}, {n} visible GPU(s): {name} (sm_{cap[0]}{cap[1]}), free memory GPU0: {free / 2**30:.2f} GiB")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--tp", type=int, default=1)
    p.add_argument("--input", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    describe_gpus()
    prompts = [json.loads(l)["prompt"] for l in open(args.input)]
    log(f"loaded {len(prompts)} prompts from {args.input}")
    llm = LLM(model=args.model, tensor_parallel_size=args.tp, max_model_len=8192, disable_log_stats=True)
    outs = llm.generate(prompts, SamplingParams(temperature=0.0, max_tokens=512))
    with open(args.out, "w") as fh:
        for o in outs:
            fh.write(json.dumps({"text": o.outputs[0].text}) + "\n")


if __name__ == "__main__":
    main()
