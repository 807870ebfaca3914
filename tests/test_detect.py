"""detect: signatures over events, a folded traceback matched link by link and line by line of each
message; landmarks (phase_marks, frame_phase) and the literal anchors the keep-filter uses."""
from __future__ import annotations

import json
from dataclasses import replace

import polars as pl
import pytest

from conftest import analyze_files, text_of
from k3logs.diagnose.detect import anchors, detect, frame_phase, match_table, phase_marks
from k3logs.evaluate.patterns import parse_text
from k3logs.ingest import keep as keep_module
from k3logs.ingest.keep import Keep, anchored

W = "(Worker_TP1 pid=213) ERROR 08-11 10:00:05 [multiproc_executor.py:596] "
CHAIN = [
    W + "Traceback (most recent call last):",
    W + '  File "/app/vllm/v1/worker/gpu_model_runner.py", line 10, in execute_model',
    W + "    out = self.model(x)",
    W + "RuntimeError: CUDA error: an illegal memory access was encountered",
    W + "",
    W + "The above exception was the direct cause of the following exception:",
    W + "",
    W + "Traceback (most recent call last):",
    W + '  File "/app/vllm/v1/executor/multiproc_executor.py", line 591, in worker_busy_loop',
    W + "    output = func(*args, **kwargs)",
    W + "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the "
        "root cause.",
]

P = "[rank1]: "
LAST_ERROR = [
    "INFO 08-11 10:00:00 [x.py:1] Automatically detected platform cuda.",
    P + "Traceback (most recent call last):",
    P + '  File "/app/serve.py", line 10, in <module>',
    P + "    main()",
    P + '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce',
    P + "    work = group.allreduce([tensor], opts)",
    P + "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3",
    P + "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
    P + "Last error:",
    P + "Call to ibv_reg_dmabuf_mr failed with error Unknown error 524",
]


def test_traceback_chain_is_matched_link_by_link(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(*CHAIN)})
    tb = a.events.filter(pl.col("exc_types").is_not_null())
    assert tb.height == 1 and tb["exc_types"][0].to_list() == ["RuntimeError",
                                                               "vllm.v1.engine.exceptions.EngineDeadError"]
    det = a.detections.filter(pl.col("eid") == tb["eid"][0])
    got = {(r["link"], r["sig"]) for r in det.iter_rows(named=True)}
    assert (0, "cuda-illegal-memory-access") in got   # the cause: first link of the chain
    assert (1, "engine-dead-error") in got            # the symptom on the same event, second link
    assert not any(link == -1 for link, _ in got)     # a folded traceback is not matched as a whole


def test_chained_traceback_stays_one_event_when_every_line_is_kept(catalogue):
    ev = parse_text(text_of(*CHAIN))
    tb = ev.filter(pl.col("exc_types").is_not_null())
    assert tb.select("line", "_line_end").rows() == [(1, 11)]
    assert tb["exc_types"][0].to_list() == ["RuntimeError", "vllm.v1.engine.exceptions.EngineDeadError"]


def test_chain_cause_and_symptom_are_reported_at_their_own_lines(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(*CHAIN)})
    where = {f.sig: (f.line, f.role) for f in a.decision.findings}
    assert where["cuda-illegal-memory-access"] == (4, "cause")
    assert where["engine-dead-error"] == (11, "symptom")
    assert a.decision.root.sig == "cuda-illegal-memory-access" and a.decision.root.span == (1, 11)


def test_match_table_splits_an_nccl_message_into_its_lines():
    ev = parse_text(text_of(*LAST_ERROR))
    mt = match_table(ev).filter(pl.col("link") == 0).sort("part")
    assert mt["part"].to_list() == [0, 1, 2, 3]
    assert mt["text"][0].startswith("torch.distributed.DistBackendError: NCCL error in:")
    assert mt["text"][3] == "Call to ibv_reg_dmabuf_mr failed with error Unknown error 524"


def test_last_error_continuation_is_detected_at_its_own_line(tmp_path, catalogue):
    ev = parse_text(text_of(*LAST_ERROR))
    det = detect(ev, catalogue)
    hit = det.filter(pl.col("sig") == "nccl-mlx5-dmabuf-524")
    assert hit.select("link", "part").rows() == [(0, 3)]
    assert json.loads(hit["fields"][0])["call"] == "ibv_reg_dmabuf_mr"
    a = analyze_files(tmp_path, {"vllm.log": text_of(*LAST_ERROR)})
    dmabuf = [f for f in a.decision.findings if f.sig == "nccl-mlx5-dmabuf-524"]
    assert [(f.line, f.span) for f in dmabuf] == [(10, (2, 10))]   # exception line 7 + part 3
    system = sorted(f.line for f in a.decision.findings if f.sig == "nccl-unhandled-system-error")
    assert system == [7, 8]
    assert (a.decision.root.category, a.decision.root.line) == ("nccl.dmabuf_524", 10)


PROMPT = ("(APIServer pid=1) INFO 08-11 10:00:03 [logger.py:43] Received request cmpl-7a1e: prompt: "
          "'RuntimeError: CUDA error: an illegal memory access was encountered', params: SamplingParams(max_tokens=64)")


def test_a_logged_prompt_is_matched_as_user_data_only(catalogue):
    """A user_data signature's line (a logged prompt) is not tried against causes and symptoms at all: the
    decision would set their matches aside anyway, and on request logs that is most of the regex work."""
    det = detect(parse_text(PROMPT + "\n"), catalogue)
    assert set(det["sig"]) == {"vllm-request-log"}
    # near miss: the same words logged by the server itself fire the cause
    own = PROMPT.replace("Received request cmpl-7a1e: prompt: '", "").replace("', params: SamplingParams(max_tokens=64)", "")
    assert set(detect(parse_text(own + "\n"), catalogue)["sig"]) == {"cuda-illegal-memory-access"}


def test_context_signature_on_a_logged_prompt_vetoes_the_cause(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda.",
        PROMPT,
        "(APIServer pid=1) INFO 08-11 10:00:04 [launcher.py:1] Application startup complete.")})
    assert a.decision.healthy and a.decision.root is None
    # a logged request is user data (user_data = true): it sets its line aside and is no finding of its own
    assert a.decision.findings == []


def test_a_logged_prompt_kept_for_the_line_after_it_loses_its_user_data(tmp_path):
    """A logged prompt kept only as context (the line before an untimed hit, here a uvicorn access line) keeps
    its time and the words that say it quotes a request; the prompt itself reaches no signature."""
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "INFO 08-11 10:00:00 [__init__.py:239] Automatically detected platform cuda.",
        PROMPT,
        '(APIServer pid=1) INFO:     10.0.0.7:54016 - "POST /v1/completions HTTP/1.1" 500 Internal Server Error')})
    quoted = a.events.filter(a.events["line"] == 2)
    assert quoted["text"].to_list() == [
        "Received request cmpl-7a1e: prompt [user data elided]"]
    assert quoted["ts"].dt.second().to_list() == [3]
    # near miss: the server's own line after it keeps its words
    assert "500 Internal Server Error" in a.events.filter(a.events["line"] == 3)["text"][0]


def test_near_miss_a_context_line_that_is_not_user_data_stays_a_finding(tmp_path, catalogue):
    from k3logs.diagnose.findings import _set_aside_by_context
    import polars as pl
    context = next(s for s in catalogue.signatures if s.role == "context" and s.veto == "line" and not s.user_data)
    det = pl.DataFrame({"eid": [1, 1, 2, 2], "link": [-1] * 4, "part": [0] * 4,
                        "sig": [context.id, "cuda-illegal-memory-access", "vllm-request-log",
                                "cuda-illegal-memory-access"], "fields": ["{}"] * 4},
                       schema_overrides={"eid": pl.UInt32, "link": pl.Int32, "part": pl.Int32})
    rest, vetoed = _set_aside_by_context(det, catalogue)
    assert rest["sig"].to_list() == [context.id]   # each cause vetoed; only the user-data match leaves nothing
    assert vetoed == {(1, -1, 0)}


def test_the_same_text_outside_a_prompt_is_a_cause(tmp_path):
    a = analyze_files(tmp_path, {"vllm.log": text_of(
        "(APIServer pid=1) ERROR 08-11 10:00:03 [core.py:1] RuntimeError: CUDA error: an illegal memory access "
        "was encountered")})
    assert not a.decision.healthy and a.decision.root.category == "gpu.illegal_access"


def test_detect_of_nothing_has_the_detection_schema(catalogue):
    det = detect(parse_text("just words\n"), catalogue)
    assert det.is_empty() and det.columns == ["eid", "link", "part", "sig", "fields"]


# ------------------------------------------------------------------------------------------
# anchors
# ------------------------------------------------------------------------------------------
def test_anchors_are_minimal(catalogue):
    got = anchors(catalogue)
    assert len(got) == len(set(got)) and list(got) == sorted(got)
    for a in got:
        for b in got:
            assert a == b or a not in b, f"anchor {a!r} is contained in {b!r}"


def test_anchors_cover_every_prefilter_literal(catalogue):
    got = anchors(catalogue, extra=("my-own-literal",))
    literals = {lit for s in catalogue.signatures for lit in s.prefilter} | {"my-own-literal"}
    for lit in literals:
        assert any(a in lit for a in got), f"prefilter {lit!r} would be dropped by the keep filter"


# ------------------------------------------------------------------------------------------
# a case-insensitive regex: its literals are looked for in any case, by the keep filter and by detect
# ------------------------------------------------------------------------------------------
CUSTOM_OPS = "ERROR 08-11 10:00:05 [loader.py:41] Failed to load Custom Ops library: libmoe_ops.so: undefined symbol"


def _fired(analysis) -> set[str]:
    return set(analysis.detections["sig"].to_list())


def test_a_case_insensitive_signature_fires_on_its_literal_in_another_case(tmp_path, catalogue):
    sig = catalogue.by_id("custom-op-library-load-failed")
    assert sig.case_insensitive and "custom op" in sig.prefilter and "custom op" not in CUSTOM_OPS
    got = analyze_files(tmp_path, {"vllm.log": text_of("INFO 08-11 10:00:00 [x.py:1] starting", CUSTOM_OPS)},
                        catalogue=catalogue)
    assert sig.id in _fired(got)


def test_near_miss_a_case_sensitive_signature_keeps_a_case_sensitive_prefilter(tmp_path, catalogue):
    """The same literal and a regex that would match: without (?i), a line holding the literal in another case
    is not even tried (the prefilter is what a case-sensitive regex needs, and no more)."""
    sig = catalogue.by_id("custom-op-library-load-failed")
    exact = replace(sig, regex="(?:[Cc]ould not|[Ff]ailed to) load (?:the )?[Cc]ustom [Oo]ps?")
    assert not exact.case_insensitive and exact.prefilter_in(CUSTOM_OPS.lower())
    assert not exact.prefilter_in(CUSTOM_OPS)
    cat = replace(catalogue, signatures=tuple(exact if s.id == sig.id else s for s in catalogue.signatures))
    got = analyze_files(tmp_path, {"vllm.log": text_of("INFO 08-11 10:00:00 [x.py:1] starting", CUSTOM_OPS)},
                        catalogue=cat)
    assert sig.id not in _fired(got)


def test_the_keep_filter_holds_folded_anchors_in_any_case_and_the_others_exactly():
    keep = Keep(("Exact Literal",), folded=("custom op",))
    raw = pl.Series(["a CUSTOM OPS line", "an exact literal line", "an Exact Literal line", "nothing"])
    assert anchored(raw, keep).to_list() == [0, 2]


@pytest.mark.parametrize("few_lines", [0, 10**6], ids=["one-regex", "aho-corasick"])
@pytest.mark.parametrize("folded", [("custom op",), ("größe",)], ids=["ascii", "unicode"])
def test_the_anchor_search_finds_the_same_lines_whichever_engine_runs_it(monkeypatch, few_lines, folded):
    # small batches take Aho-Corasick (ASCII folding only), big ones the one regex: the lines found are the same,
    # and a folded anchor beyond ASCII keeps the regex (its folding is Unicode's)
    monkeypatch.setattr(keep_module, "FEW_LINES", few_lines)
    keep = Keep(("Exact Literal", "a|b"), folded=folded)
    raw = pl.Series(["a CUSTOM OPS line", "an exact literal line", "an Exact Literal line", "nothing", "x a|b y",
                     "ab", "GRÖSSE", "Größe"])
    want = [0, 2, 4] if folded[0].isascii() else [2, 4, 7]
    assert anchored(raw, keep).to_list() == want


# ------------------------------------------------------------------------------------------
# landmarks
# ------------------------------------------------------------------------------------------
def test_phase_marks_name_the_phase_a_line_starts():
    ev = pl.DataFrame({"text": [
        "vLLM API server version 0.11.0",
        "rank 3 in world size 8 is assigned as DP rank 0, PP rank 0, TP rank 3, EP rank 3",
        "Starting to load model /models/x...",
        "Available KV cache memory: 34.27 GiB",
        "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   1%|          | 1/67 [00:00<00:19,  3.45it/s]",
        "Application startup complete.",
        "Shutting down",
        "GET /health HTTP/1.1 200",
    ]})
    got = phase_marks(ev)
    assert got["mark"].to_list() == ["startup", "distributed_init", "model_load", "kv_cache_init",
                                     "cudagraph_capture", "serving", "shutdown", None]
    assert got["restart"].to_list() == [True] + [False] * 7


@pytest.mark.parametrize("section, column", [("progress", "progress"), ("joined", "joined")])
def test_progress_and_joined_lines_read_their_samples(section, column):
    from k3logs.catalogue.landmarks import landmark_data
    data = landmark_data()[section]
    got = phase_marks(pl.DataFrame({"text": data["samples"] + data["no_match"]}))[column].to_list()
    assert got == [True] * len(data["samples"]) + [False] * len(data["no_match"])


@pytest.mark.parametrize("frames, phase", [
    (["run_engine_core", "__init__", "load_model", "load_weights"], "model_load"),
    (["load_model", "capture_model"], "cudagraph_capture"),       # the innermost known frame wins
    (["capture_model", "load_model", "helper"], "model_load"),
    (["execute_model", "forward"], "serving"),
    (["determine_num_available_blocks", "profile_run", "_dummy_run", "execute_model"], "kv_cache_init"),
    # torch.compile run by the profiling pass: compilation, not the KV cache's sizing
    (["determine_available_memory", "profile_run", "standalone_compile", "compile_fx", "_compile_fx_inner"],
     "cudagraph_capture"),
    # a structured-output backend built when a request arrives: serving; a dataclass's __post_init__ says nothing
    (["process_input_sockets", "preprocess_add_request", "grammar_init", "__init__", "__post_init__"], "serving"),
    (["from_engine_args", "create_engine_config", "__post_init__"], "startup"),    # near miss: the config's check
    # a parser looked up by the name the arguments give, late in the engine's start: the arguments' check
    (["run_engine_core", "__init__", "__init__", "get_reasoning_parser"], "startup"),
    (["run_engine_core", "__init__", "__init__", "get_parser"], None),             # near miss: no lookup by name
    (["main", "helper"], None),
    ([], None),
    (None, None),
])
def test_frame_phase_takes_the_innermost_known_frame(frames, phase):
    assert frame_phase(frames) == phase


def test_a_landmark_within_the_steps_of_the_frame_s_function_is_more_specific_than_the_frame():
    stack = ["worker_main", "__init__", "init_device", "__init__", "build_logitsprocs"]
    # vLLM's init_device also joins the process group: a process that printed it had reached distributed init
    assert frame_phase(stack, "distributed_init") == "distributed_init"
    assert frame_phase(stack) == "device_init"
    # near misses: a landmark beyond the function's steps, and a function that runs one step, give the frame's
    assert frame_phase(stack, "model_load") == "device_init"
    assert frame_phase(["load_model", "load_weights"], "cudagraph_capture") == "model_load"
    # V1's engine core sizes the KV cache, then has the workers allocate it and capture the model's graphs
    engine = ["run_engine_core", "__init__", "_initialize_kv_caches", "initialize_from_config", "collective_rpc"]
    assert frame_phase(engine, "cudagraph_capture") == "cudagraph_capture"
    assert frame_phase(engine, "serving") == "kv_cache_init"


@pytest.mark.parametrize("line, starts", [
    ("Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being "
     "overloaded, please further tune the variable for optimal performance in your application as needed.", True),
    ("Starting headless worker node: node_rank=1, nnodes=2, local workers=8, master_addr=10.52.0.21", True),
    ("Automatically detected platform cuda.", False),   # near miss: printed at import by every process
])
def test_a_launchers_or_a_headless_nodes_start_begins_an_attempt(line, starts):
    assert phase_marks(pl.DataFrame({"text": [line]}))["restart"].to_list() == [starts]


@pytest.mark.parametrize("at_frame, phase", [
    (True, "device_init"),         # a check made where init_device begins: the frame's step
    (False, "distributed_init")])  # near miss: a failure anywhere in the function: the landmark it printed
def test_a_check_made_where_its_frame_begins_takes_the_frame_s_phase(at_frame, phase):
    from types import SimpleNamespace

    from k3logs.diagnose.findings import _phase
    sig = SimpleNamespace(phase=("device_init", "model_load"), at_frame=at_frame)
    assert _phase("distributed_init", ["worker_main", "init_device"], sig) == phase
