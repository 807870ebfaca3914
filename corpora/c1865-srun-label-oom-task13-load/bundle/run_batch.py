# /lustre/proj/k3batch/run_batch.py (excerpt, engine construction)
import argparse, json, os
from vllm import LLM, SamplingParams

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model"); ap.add_argument("--tp", type=int); ap.add_argument("--pp", type=int)
    ap.add_argument("--input"); ap.add_argument("--output")
    ap.add_argument("--max-tokens", type=int, default=4096); ap.add_argument("--temperature", type=float, default=0.7)
    a = ap.parse_args()
    llm = LLM(
        model=a.model,
        tensor_parallel_size=a.tp,
        pipeline_parallel_size=a.pp,
        distributed_executor_backend="external_launcher",   # every Slurm task is one rank
        load_format="runai_streamer",
        trust_remote_code=True,
        max_model_len=131072,
        gpu_memory_utilization=0.90,
        enable_prefix_caching=True,
        seed=0,
    )
    prompts = [json.loads(l) for l in open(a.input)]
    sp = SamplingParams(max_tokens=a.max_tokens, temperature=a.temperature, seed=0)
    outs = llm.chat([p["messages"] for p in prompts], sp)
    if int(os.environ.get("RANK", "0")) == 0:
        os.makedirs(a.output, exist_ok=True)
        with open(os.path.join(a.output, "results.jsonl"), "w") as f:
            for p, o in zip(prompts, outs):
                f.write(json.dumps({"id": p["id"], "text": o.outputs[0].text}) + "\n")
