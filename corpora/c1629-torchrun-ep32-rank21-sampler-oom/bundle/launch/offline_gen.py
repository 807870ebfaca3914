# Offline synthetic-data generation with vLLM under torchrun (external_launcher).
# One vLLM engine per rank; TP=8 inside a node, DP=4 across nodes, experts sharded over all 32 ranks (EP).
import argparse
import json
import os
import time

from vllm import LLM, SamplingParams

MODEL = "/lustre/models/Qwen3-235B-A22B-Instruct-2507-FP8"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--prompts", required=True)
    p.add_argument("--chunk-size", type=int, default=2048)
    p.add_argument("--max-tokens", type=int, default=2048)
    p.add_argument("--out-dir", default="/lustre/proj/synth/out")
    return p.parse_args()


def load_prompts(path, dp_rank, dp_size):
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    return [r["messages"] for i, r in enumerate(rows) if i % dp_size == dp_rank]


def log(msg):
    print(f"[synth] {time.strftime('%Y-%m-%d %H:%M:%S')} {msg}", flush=True)


def main():
    args = parse_args()
    llm = LLM(
        model=MODEL,
        tensor_parallel_size=8,
        data_parallel_size=4,
        enable_expert_parallel=True,
        distributed_executor_backend="external_launcher",
        max_model_len=16384,
        max_num_seqs=1024,
        gpu_memory_utilization=0.94,
        disable_log_stats=True,
        seed=1,
    )
    pc = llm.llm_engine.vllm_config.parallel_config
    dp_rank, dp_size = pc.data_parallel_rank, pc.data_parallel_size
    tp_rank = int(os.environ["RANK"]) % 8
    sampling_params = SamplingParams(
        temperature=0.8, top_p=0.95, top_k=40, max_tokens=args.max_tokens, seed=1
    )
    prompts = load_prompts(args.prompts, dp_rank, dp_size)
    n_chunks = (len(prompts) + args.chunk_size - 1) // args.chunk_size
    if tp_rank == 0:
        log(
            f"dp={dp_rank} engine ready; {len(prompts)} prompts assigned to this replica "
            f"({n_chunks} chunks x {args.chunk_size}), sampling: temperature=0.8 top_p=0.95 "
            f"top_k=40 max_tokens={args.max_tokens}"
        )
    for c in range(n_chunks):
        batch = prompts[c * args.chunk_size:(c + 1) * args.chunk_size]
        batch = [llm.get_tokenizer().apply_chat_template(m, tokenize=False,
                                                         add_generation_prompt=True)
                 for m in batch]
        t0 = time.time()

        # every rank of the replica runs the same batch; only TP rank 0 writes
        outputs = llm.generate(batch, sampling_params, use_tqdm=False)

        if tp_rank != 0:
            continue
        path = f"{args.out_dir}/part-dp{dp_rank}-{c + 1:03d}.jsonl"
        ntok = 0
        with open(path, "w") as f:
            for o in outputs:
                ntok += len(o.outputs[0].token_ids)
                f.write(json.dumps({"prompt": o.prompt, "text": o.outputs[0].text}) + "\n")
        log(f"dp={dp_rank} chunk {c + 1}/{n_chunks} done: {len(batch)} prompts in "
            f"{time.time() - t0:.1f} s, {ntok / 1e6:.2f}M generated tokens -> {path}")


if __name__ == "__main__":
    main()
