"""The one event schema every source is parsed into, and the small vocabularies around it."""
from __future__ import annotations

import polars as pl

# Column names, declared once.
FILE, LINE, LINE_END, SUB = "file", "line", "line_end", "sub"
SOURCE, WRAPPER, STREAM = "source", "wrapper", "stream"
NODE, RANK, GPU, PID, PROCESS, HOST, IP = "node", "rank", "gpu", "pid", "process", "host", "ip"
LEVEL, TS, TS_QUALITY, UPTIME = "level", "ts", "ts_quality", "uptime"
LOCATION, MESSAGE = "location", "message"
EXC_TYPES, EXC_MESSAGES, EXC_LINES = "exc_types", "exc_messages", "exc_lines"
TRUNCATED = "truncated"

UTC_US = pl.Datetime("us", "UTC")

EVENT_SCHEMA: dict[str, pl.DataType] = {
    FILE: pl.String,          # path inside the bundle (report-contract.md)
    LINE: pl.Int64,           # first physical line of the event, 1-based, newline-counted
    LINE_END: pl.Int64,       # last physical line of the event (== line unless folded)
    SUB: pl.Int8,             # 0, or 1.. for text glued onto the same physical line after a tqdm state
    SOURCE: pl.String,        # application format after peeling wrappers: vllm, nccl, torch, kernel, ...
    WRAPPER: pl.String,       # container/collector wrapper that was peeled: docker_json, cri, journald, ...
    STREAM: pl.String,        # stdout / stderr when the wrapper says
    NODE: pl.String,
    RANK: pl.Int32,           # global rank in the default process group
    GPU: pl.Int32,            # CUDA device index as the process sees it (NCCL [dev])
    PID: pl.Int64,
    PROCESS: pl.String,       # process name: Worker_TP3, EngineCore_DP0, APIServer, kernel comm, ...
    HOST: pl.String,          # host name written in the line itself (NCCL, journald, torchelastic)
    IP: pl.String,            # Ray's ip= of the emitting actor
    LEVEL: pl.String,         # DEBUG INFO WARNING ERROR CRITICAL (normalised)
    TS: UTC_US,               # aligned UTC time
    TS_QUALITY: pl.String,    # exact | inferred | relative | none
    UPTIME: pl.Float64,       # kernel seconds since boot, when the line carries them
    LOCATION: pl.String,      # logger file:line (vllm [core.py:708], NCCL misc/socket.cc:484)
    MESSAGE: pl.String,       # the text after every prefix; for a folded traceback its first exception
    EXC_TYPES: pl.List(pl.String),     # folded traceback: exception type of each link, first (innermost cause) first
    EXC_MESSAGES: pl.List(pl.String),
    EXC_LINES: pl.List(pl.Int64),      # the physical line stating each link
    TRUNCATED: pl.Boolean,    # the physical line was longer than the limit and was cut
}

TS_QUALITIES = ("exact", "inferred", "relative", "none")

PHASES = (
    "startup", "device_init", "distributed_init", "model_load",
    "kv_cache_init", "cudagraph_capture", "serving", "shutdown",
)

ROLES = ("cause", "symptom", "context")


def empty_events() -> pl.DataFrame:
    return pl.DataFrame(schema=EVENT_SCHEMA)


def in_line_order(df: pl.DataFrame) -> bool:
    """Whether the rows are in (line, sub) order (a check is much cheaper than a sort)."""
    return df.select(pl.col(LINE) * 256 + pl.col(SUB).cast(pl.Int64)).to_series().is_sorted()  # sub < 128


MIXED = object()


def the_one(s: pl.Series):
    """The value every row of `s` holds (None when all are null), else MIXED. Much of a batch is constant
    (one file; often one node and pid): a value worked out once is cheaper than a lookup per row."""
    if s.null_count() == len(s):
        return None
    if s.null_count():
        return MIXED
    v = s[0]
    return v if (s == v).all() else MIXED


def at_rows(n: int, idx: pl.Series, values: pl.Series) -> pl.Series:
    """A column of `n` rows holding `values` at rows `idx` and null elsewhere (work done on a few rows, put
    back in place)."""
    return pl.repeat(None, n, dtype=values.dtype, eager=True).scatter(idx, values)


# What `sniff` can say a bundle file is (after any container wrapper is peeled).
# Log kinds go through the line parser into events; dump kinds are read whole for environment facts.
LOG_KINDS = (
    "vllm",         # vLLM server / engine / worker output (may also carry NCCL, torch, tracebacks)
    "nccl",         # NCCL debug output, e.g. an NCCL_DEBUG_FILE per rank
    "torch",        # torchrun / torchelastic / c10d output without vLLM lines
    "kernel",       # dmesg (raw, -T, iso), journalctl -k, syslog / kern.log
    "journal",      # journald / syslog of services other than the kernel (kubelet, systemd units)
    "ray",          # Ray driver / raylet / worker logs
    "k8s_events",   # kubectl get events
    "log",          # other timestamped or free-form log text
)
DUMP_KINDS = (
    "nvidia_smi", "nvidia_smi_q", "nvidia_topo", "nvidia_smi_csv", "nvidia_smi_list",
    "env", "launch_cmd", "pip_freeze", "collect_env",
    "docker_inspect", "docker_ps", "pod_spec", "compose", "k8s_describe", "k8s_get", "prometheus",
    "lsmod", "ibstat", "uptime", "ip_addr", "ps", "free", "dockerfile", "systemd_unit", "supervisor_program",
    "systemctl_status",
    "slurm_job", "model_config", "json", "manifest",
)
# captures: OpenAI request/response bodies as JSON lines, read by `k3logs prefix` / `toolcalls` and for the
# go-live verdict, never as log lines (a prompt quoting an error is not that error)
OTHER_KINDS = ("text", "binary", "empty", "captures")
WRAPPERS = ("none", "docker_json", "cri", "rfc3339", "journald", "compose", "kubectl_prefix", "stern")
