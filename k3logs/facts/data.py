"""Load patterns/facts.toml (version facts, evidence list, check definitions, log-fact regexes) into frozen
dataclasses, validating every key; every problem carries the file and line (CatalogueError lists them all).

The log-fact transforms live here too, so that the samples in the file can be replayed when it loads.
"""
from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from k3logs.catalogue.read import Issue, key_line, read_toml, regex_error, table_starts
from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .cmdline import ARG_FACTS
from .util import FACTS, Sink, emit_env, torch_build

TRANSFORMS = ("text", "driver", "torch", "cuda_int", "tuple", "const", "env", "vllm_args", "engine_config")
# "regex": the named regexes of the extractors, read (and checked) by catalogue/regexes.py, not here
TOP_KEYS = {"versions", "driver_min_branch", "all2all_backend", "evidence", "check", "log_fact", "regex",
            "zone_offsets"}
VERSION_TYPES = {"k3_image": str, "k3_cuda_major": int, "k3_torch_cuda_build": str, "k3_min_vllm": str,
                 "k3_min_gpus": int, "k3_gpu_class": list, "k3_model_words": list, "rdma_ucx_tls": str,
                 "docker_default_shm_bytes": int, "host_local_interfaces": list}
EVIDENCE_KEYS = {"id", "title", "any_fact", "all_fact", "any_kind", "fact_prefix", "traceback", "node"}
CHECK_KEYS = {"id", "title", "category", "k3_only", "fact", "remediation", "explains", "before_ready"}
LOG_KEYS = {"id", "fact", "prefilter", "regex", "transform", "groups", "value", "samples"}


@dataclass(frozen=True)
class Versions:
    k3_image: str
    k3_cuda_major: int
    k3_torch_cuda_build: str
    k3_min_vllm: str
    k3_min_gpus: int
    k3_gpu_class: tuple[str, ...]
    k3_model_words: tuple[str, ...]
    rdma_ucx_tls: str
    docker_default_shm_bytes: int
    host_local_interfaces: tuple[str, ...]


@dataclass(frozen=True)
class EvidenceItem:
    id: str
    title: str
    any_fact: tuple[str, ...] = ()
    all_fact: tuple[str, ...] = ()
    any_kind: tuple[str, ...] = ()
    fact_prefix: tuple[str, ...] = ()
    traceback: bool = False
    node: bool = False


@dataclass(frozen=True)
class CheckDef:
    id: str
    title: str
    category: str
    fact: str
    remediation: tuple[str, ...]
    k3_only: bool = False
    location: SourceLocation = field(default=SourceLocation("<memory>"), compare=False)
    explains: tuple[str, ...] = ()   # root categories its failure explains (the errors it causes on other ranks)
    before_ready: bool = False       # its fault shows before the server is ready: not what fails once it served


@dataclass(frozen=True)
class LogFact:
    id: str
    fact: str
    prefilter: tuple[str, ...]
    regex: str
    transform: str = "text"
    groups: tuple[tuple[str, str], ...] = ()
    value: str | None = None
    samples: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    location: SourceLocation = field(default=SourceLocation("<memory>"), compare=False)

    @property
    def compiled(self) -> re.Pattern:
        return _compile(self.regex)


@dataclass(frozen=True)
class FactsData:
    versions: Versions
    driver_min_branch: dict[int, int]
    all2all_backend: dict[str, str]
    evidence: tuple[EvidenceItem, ...]
    checks: dict[str, CheckDef]
    log_facts: tuple[LogFact, ...]
    path: Path | None = None

    @property
    def prefilters(self) -> list[str]:
        return sorted({p for lf in self.log_facts for p in lf.prefilter})


@lru_cache(maxsize=256)
def _compile(rx: str) -> re.Pattern:
    return re.compile(rx)


# ------------------------------------------------------------------------------------------
# log-fact transforms
# ------------------------------------------------------------------------------------------
def apply_log_fact(lf: LogFact, m: re.Match, sink: Sink, line: int | None) -> None:
    """Add to `sink` the facts one regex match of `lf` states."""
    gd = {k: v for k, v in m.groupdict().items() if v is not None}
    val = gd.get("value")
    t = lf.transform
    if t == "const":
        sink.add(lf.fact, lf.value, line)
    elif t == "driver" and val:
        sink.add("driver_version", val, line)
        sink.add("driver_branch", val.split(".", 1)[0], line)
    elif t == "torch" and val:
        sink.add("torch_version", val, line)
        sink.add("torch_cuda_build", torch_build(val), line)
    elif t == "cuda_int" and val and val.isdigit():
        n = int(val)
        sink.add(lf.fact, f"{n // 1000}.{(n % 1000) // 10}", line)
    elif t == "tuple" and val:   # a version Python printed as a tuple: (2, 27, 3)
        sink.add(lf.fact, ".".join(part.strip() for part in val.split(",")), line)
    elif t == "env" and val is not None and gd.get("name"):
        emit_env(sink, gd["name"], val, line)
    elif t == "vllm_args" and val:
        _vllm_args(sink, val, line)
    elif t == "engine_config":
        if val:
            sink.add("vllm_version", val, line)
        _engine_config(sink, gd.get("config", ""), line)
    elif t == "text" and val:
        sink.add(lf.fact, val, line)
    for group, fact in lf.groups:
        if gd.get(group):
            sink.add(fact, gd[group], line)


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        return text.strip().strip("'\"")


def _vllm_args(sink: Sink, text: str, line: int | None) -> None:
    args = _literal(text) if len(text) < 20000 else None
    if not isinstance(args, dict):  # truncated line: read the pairs that are whole
        args = {k: _literal(v) for k, v in FACTS["vllm_args_pair"].findall(text)}
    model = args.get("model") or args.get("model_tag")
    if isinstance(model, str):
        sink.add("model", model, line)
    for key, fact in ARG_FACTS:
        v = args.get(key)
        if isinstance(v, list):
            v = v[0] if v else None
        if v is not None and not isinstance(v, (dict, bool)):
            sink.add(fact, v, line)
    if "enable_prefix_caching" in args and args["enable_prefix_caching"] is not None:
        sink.add("prefix_caching", "true" if args["enable_prefix_caching"] in (True, "True", "true") else "false", line)
    if args.get("enable_expert_parallel") is True:
        sink.add("expert_parallel", "true", line)
    kv = args.get("kv_transfer_config")
    if kv:
        sink.add("kv_transfer", kv.get("kv_connector", "configured") if isinstance(kv, dict) else "configured", line)


_ENGINE_KEYS = (("model", "model"), ("tensor_parallel_size", "tensor_parallel_size"),
                ("pipeline_parallel_size", "pipeline_parallel_size"), ("data_parallel_size", "data_parallel_size"),
                ("max_seq_len", "max_model_len"), ("enable_prefix_caching", "prefix_caching"),
                ("served_model_name", "served_model_name"))


def _engine_config(sink: Sink, text: str, line: int | None) -> None:
    for key, fact in _ENGINE_KEYS:  # the regex is built from each key
        m = re.search(rf"(?:^|[\s,]){key}=('(?:[^'\\]|\\.)*'|[^,\s]+)", text)
        if not m or m.group(1) == "None":
            continue
        v = m.group(1).strip("'")
        sink.add(fact, v.lower() if fact == "prefix_caching" else v, line)


# ------------------------------------------------------------------------------------------
# loading and validation
# ------------------------------------------------------------------------------------------
def _strs(v: object) -> tuple[str, ...] | None:
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)
    return None


def _taxonomy_ids(path: Path) -> set[str]:
    try:
        return {str(c.get("id")) for c in tomllib.loads(path.read_text(encoding="utf-8")).get("category", [])}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return set()


def _tables(data: dict, text: str, name: str, path: Path, keys: set[str], issues: list[Issue]):
    starts = table_starts(text, name)
    seen: dict[str, int | None] = {}
    for i, d in enumerate(data.get(name, [])):
        line = starts[i] if i < len(starts) else None
        loc = SourceLocation(str(path), line)
        end = starts[i + 1] if i + 1 < len(starts) else None
        if not isinstance(d, dict):
            issues.append(Issue("error", "type", f"[[{name}]] must be a table", loc))
            continue
        for k in sorted(set(d) - keys):
            issues.append(Issue("error", "unknown-key", f"[[{name}]] {d.get('id', '?')!r}: unknown key {k!r}",
                                SourceLocation(str(path), key_line(text, line or 1, end, k))))
        if not isinstance(d.get("id"), str) or not d.get("id"):
            issues.append(Issue("error", "missing-key", f"[[{name}]] needs an id", loc))
            continue
        if d["id"] in seen:
            issues.append(Issue("error", "duplicate-id", f"{name} id {d['id']!r} also defined at line {seen[d['id']]}", loc))
        seen[d["id"]] = line
        yield d, loc, (lambda k, _l=line, _e=end: SourceLocation(str(path), key_line(text, _l or 1, _e, k)))


def load_facts_data(path: Path | str | None = None, collect_errors: bool = False):
    """Load facts.toml (default: the built-in one). Raises CatalogueError listing every problem, unless
    `collect_errors`, which returns `(data or None, issues)`."""
    path = Path(path) if path else data_dir("patterns") / "facts.toml"
    issues: list[Issue] = []
    data = _load(path, issues)
    errors = [i for i in issues if i.severity == "error"]
    if collect_errors:
        return (data if not errors else None), issues
    if errors or data is None:
        raise CatalogueError(f"{len(errors)} problem(s) in {path.name}; first: {errors[0] if errors else 'unreadable'}",
                             errors, errors[0].location if errors else SourceLocation(str(path)))
    return data


@lru_cache(maxsize=4)
def default_facts_data() -> FactsData:
    return load_facts_data()


def _load(path: Path, issues: list[Issue]) -> FactsData | None:
    got = read_toml(path, issues)
    if got is None:
        return None
    raw, text = got
    loc = lambda key, table=None: SourceLocation(str(path), key_line(text, _header(text, table), None, key))  # noqa: E731
    for k in sorted(set(raw) - TOP_KEYS):
        issues.append(Issue("error", "unknown-key", f"unknown top-level key {k!r}", loc(k)))
    vraw = raw.get("versions", {})
    vals = {}
    for k, typ in VERSION_TYPES.items():
        v = vraw.get(k)
        if not isinstance(v, typ) or isinstance(v, bool):
            issues.append(Issue("error", "versions", f"[versions] {k} must be a {typ.__name__}", loc(k, "versions")))
            v = typ()
        vals[k] = tuple(str(x) for x in v) if typ is list else v
    for k in sorted(set(vraw) - set(VERSION_TYPES)):
        issues.append(Issue("error", "unknown-key", f"[versions] unknown key {k!r}", loc(k, "versions")))
    branches = {}
    for k, v in raw.get("driver_min_branch", {}).items():
        if not str(k).isdigit() or not isinstance(v, int):
            issues.append(Issue("error", "driver_min_branch", f"[driver_min_branch] {k} = {v!r}: CUDA major = branch",
                                loc(str(k), "driver_min_branch")))
            continue
        branches[int(k)] = v
    a2a = {str(k): str(v) for k, v in raw.get("all2all_backend", {}).items()}
    for need in ("rdma", "nvlink"):
        if need not in a2a:
            issues.append(Issue("error", "all2all_backend", f"[all2all_backend] needs {need!r}", SourceLocation(str(path))))
    evidence = [_evidence(d, l, kl, issues) for d, l, kl in _tables(raw, text, "evidence", path, EVIDENCE_KEYS, issues)]
    taxonomy = _taxonomy_ids(path.parent / "taxonomy.toml") or _taxonomy_ids(data_dir("patterns") / "taxonomy.toml")
    checks = [_check(d, l, kl, taxonomy, issues) for d, l, kl in _tables(raw, text, "check", path, CHECK_KEYS, issues)]
    logs = [_log_fact(d, l, kl, issues) for d, l, kl in _tables(raw, text, "log_fact", path, LOG_KEYS, issues)]
    for k, v in raw.get("zone_offsets", {}).items():   # (read by facts/util.py's tz_suffix)
        if not re.fullmatch(r"[A-Z]{2,5}", str(k)) or not re.fullmatch(r"[+-]\d\d:\d\d", str(v)):
            issues.append(Issue("error", "zone_offsets", f"[zone_offsets] {k} = {v!r}: ABBR = '+HH:MM'",
                                loc(str(k), "zone_offsets")))
    return FactsData(Versions(**vals), branches, a2a, tuple(e for e in evidence if e),
                     {c.id: c for c in checks if c}, tuple(x for x in logs if x), path)


def _header(text: str, table: str | None) -> int:
    if not table:
        return 1
    for i, ln in enumerate(text.splitlines()):
        if re.match(rf"^\s*\[\s*{re.escape(table)}\s*\]", ln):
            return i + 1
    return 1


def _evidence(d: dict, loc, kl, issues: list[Issue]) -> EvidenceItem | None:
    lists = {}
    for k in ("any_fact", "all_fact", "any_kind", "fact_prefix"):
        v = _strs(d.get(k, []))
        if v is None:
            issues.append(Issue("error", "type", f"evidence {d['id']!r}: {k} must be a list of strings", kl(k)))
            v = ()
        lists[k] = v
    if not isinstance(d.get("title"), str):
        issues.append(Issue("error", "missing-key", f"evidence {d['id']!r} needs a title", loc))
        return None
    if not any(lists.values()) and not d.get("traceback") and not d.get("node"):
        issues.append(Issue("error", "evidence", f"evidence {d['id']!r} names nothing that satisfies it", loc))
    return EvidenceItem(d["id"], d["title"], traceback=bool(d.get("traceback")), node=bool(d.get("node")), **lists)


def _check(d: dict, loc, kl, taxonomy: set[str], issues: list[Issue]) -> CheckDef | None:
    for k in ("title", "category", "fact"):
        if not isinstance(d.get(k), str) or not d[k]:
            issues.append(Issue("error", "missing-key", f"check {d['id']!r} needs {k}", loc))
            return None
    rem = _strs(d.get("remediation"))
    if not rem:
        issues.append(Issue("error", "missing-key", f"check {d['id']!r} needs a remediation list", kl("remediation")))
        rem = ()
    if taxonomy and d["category"] not in taxonomy:
        issues.append(Issue("error", "taxonomy", f"check {d['id']!r}: unknown category {d['category']!r}", kl("category")))
    explains = _strs(d.get("explains", []))
    if explains is None:
        issues.append(Issue("error", "type", f"check {d['id']!r}: explains must be a list of categories", kl("explains")))
        explains = ()
    for c in explains:
        if taxonomy and c not in taxonomy:
            issues.append(Issue("error", "taxonomy", f"check {d['id']!r}: explains an unknown category {c!r}",
                                kl("explains")))
    return CheckDef(d["id"], d["title"], d["category"], d["fact"], rem, bool(d.get("k3_only", False)), loc,
                    tuple(explains), bool(d.get("before_ready", False)))


def _log_fact(d: dict, loc, kl, issues: list[Issue]) -> LogFact | None:
    pre, rx, fact = _strs(d.get("prefilter")), d.get("regex"), d.get("fact")
    if not pre or not isinstance(rx, str) or not isinstance(fact, str):
        issues.append(Issue("error", "missing-key", f"log_fact {d['id']!r} needs fact, prefilter and regex", loc))
        return None
    err = regex_error(rx)
    try:
        re.compile(rx)
    except re.error as e:
        err = err or f"Python re: {e}"
    if err:
        issues.append(Issue("error", "regex", f"log_fact {d['id']!r}: {err}", kl("regex")))
        return None
    transform = d.get("transform", "text")
    if transform not in TRANSFORMS:
        issues.append(Issue("error", "transform", f"log_fact {d['id']!r}: transform must be one of {TRANSFORMS}",
                            kl("transform")))
        return None
    groups = d.get("groups", {})
    samples = []
    for s in d.get("samples", []):
        if not isinstance(s, dict) or not isinstance(s.get("line"), str) or not isinstance(s.get("facts"), dict):
            issues.append(Issue("error", "samples", f"log_fact {d['id']!r}: samples are {{line, facts}}", kl("samples")))
            continue
        samples.append((s["line"], tuple((str(k), str(v)) for k, v in s["facts"].items())))
    lf = LogFact(d["id"], fact, pre, rx, transform, tuple((str(k), str(v)) for k, v in groups.items()),
                 d.get("value"), tuple(samples), loc)
    if not samples:
        issues.append(Issue("error", "samples", f"log_fact {d['id']!r} has no samples", loc))
    for line, want in samples:
        if not any(p in line for p in pre):
            issues.append(Issue("error", "samples", f"log_fact {lf.id!r}: sample has none of the prefilter strings: "
                                f"{line[:60]!r}", kl("samples")))
        sink = Sink("<sample>", None, "log")
        m = lf.compiled.search(line)
        if m:
            apply_log_fact(lf, m, sink, 1)
        got = {(f.name, f.value) for f in sink.facts}
        missing = [w for w in want if w not in got]
        if missing:
            issues.append(Issue("error", "samples", f"log_fact {lf.id!r}: sample {line[:60]!r} does not give "
                                f"{dict(missing)} (got {dict(sorted(got))})", kl("samples")))
    return lf
