import argparse, json, os
from vllm import LLM, SamplingParams

MODEL = "Qwen/Qwen3-235B-A22B-Instruct-2507"

def main():
    p = argparse.ArgumentParser(); p.add_argument("--input"); p.add_argument("--output"); a = p.parse_args()
    prompts = [json.loads(l)["prompt"] for l in open(a.input)]
    rank = int(os.environ["RANK"])
    # every torchrun rank builds the same engine; vLLM wires them into one TP8 x PP2 instance
    llm = LLM(
        model=MODEL,
        tensor_parallel_size=8,
        pipeline_parallel_size=2,
        distributed_executor_backend="external_launcher",
        max_model_len=32768,
        gpu_memory_utilization=0.9,
        seed=1,
        disable_log_stats=True,
    )
    outs = llm.generate(prompts, SamplingParams(temperature=0.7, max_tokens=2048))
    if rank == 0:
        os.makedirs(a.output, exist_ok=True)
        with open(os.path.join(a.output, "out.jsonl"), "w") as f:
            for o in outs: f.write(json.dumps({"prompt": o.prompt, "text": o.outputs[0].text}) + "\n")

if __name__ == "__main__":
    main()
