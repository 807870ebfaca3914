"""Load patterns/formats.toml: the wrappers, prefixes and line formats the parser applies, as data."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .cache import content_key, kept
from .read import Problems, read_toml_or_raise, regex_error, table_starts

LAYERS = ("wrapper", "prefix", "line")
# the [[sniff]] names k3logs/ingest/sniff.py reads
SNIFF_LINES = ("vllm_proc", "vllm_text", "torchelastic", "k8s_events", "capture_line", "ray_mark", "traceback_body")
TIME_GROUPS = ("t_iso", "t_local", "t_md", "t_hms", "t_glog", "t_ctime", "t_date", "t_mdy", "t_syslog",
               "t_clf", "t_sel", "t_uptime", "t_epoch_us", "t_epoch_s", "t_epoch_ms", "t_tod", "t_rfc2822",
               "t_kibana")
KEYS = {"name", "regex", "source", "level_map", "first_for", "samples", "json_escaped", "json", "quoted", "keep",
        "csv_quoted", "sparse", "arrival"}
# the fields a wrapper may read by JSON key (`json = { field = "KEY" }`): one JSON object a line, keys in any order
JSON_FIELDS = {"text", "t_epoch_us", "t_iso", "t_local", "host", "pid", "ident", "unit", "stream", "pod", "container",
               "exc"}   # (exc: a logger's formatted exception, the lines that follow its message)


def _json_keys(fields: dict) -> tuple[tuple[str, str], ...]:
    """A wrapper's `json` table as (field, key) pairs: a field's keys (one, or a list of the names loggers give
    it) in their order."""
    return tuple((str(k), str(v)) for k in sorted(fields) for v in (fields[k] if isinstance(fields[k], list)
                                                                    else [fields[k]]))


def json_path(key: str) -> str:
    """A wrapper's dotted key as a JSON path: a part that is no plain name ('@timestamp') in brackets."""
    return "$" + "".join(f".{part}" if part.replace("_", "a").isalnum() else f"['{part}']" for part in key.split("."))


@dataclass(frozen=True)
class Format:
    layer: str
    name: str
    regex: str
    source: str | None
    level_map: tuple[tuple[str, str], ...]
    first_for: tuple[str, ...]
    json_escaped: bool
    json_fields: tuple[tuple[str, str], ...]   # (field, JSON key): a wrapper read by key, not by place (a field
    # named more than once: the first of its keys the object has)
    samples: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    location: SourceLocation
    quoted: bool = False   # a wrapper whose lines keep their time and host in a file of plain text too
    keep: tuple[str, ...] = ()  # literals of lines whose text is encoded (no anchor shows in them): parse them all
    csv_quoted: bool = False  # the text is a CSV cell: quoted, its quotes doubled, when it holds a comma or a quote
    sparse: bool = False  # a wrapper of a JSON document's few lines that hold a log line
    arrival: bool = False  # a wrapper of a file written live as its tasks printed: its line order is time order

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\(\?P<(\w+)>", self.regex)) + tuple(f for f, _ in self.json_fields)


@dataclass(frozen=True)
class Formats:
    wrappers: dict[str, Format]
    prefixes: tuple[Format, ...]
    lines: tuple[Format, ...]
    sniff: dict[str, re.Pattern] = field(default_factory=dict)   # [[sniff]]: what tells a file's kind

    @property
    def keep(self) -> tuple[str, ...]:
        """Literals of lines to parse whatever they hold (wrappers' `keep`)."""
        return tuple(lit for f in self.wrappers.values() for lit in f.keep)

    def line_order(self, kind: str) -> tuple[Format, ...]:
        """Line formats with the ones preferred for this file kind first (order only changes speed)."""
        first = tuple(f for f in self.lines if kind in f.first_for)
        return first + tuple(f for f in self.lines if kind not in f.first_for)


def load_formats(path: Path | None = None) -> Formats:
    path = path or data_dir("patterns") / "formats.toml"
    data, text = read_toml_or_raise(path, "formats")
    problems = Problems("formats")
    out: dict[str, list[Format]] = {layer: [] for layer in LAYERS}
    for layer in LAYERS:
        starts = table_starts(text, layer)
        for i, d in enumerate(data.get(layer, [])):
            loc = SourceLocation(str(path), starts[i] if i < len(starts) else None)
            unknown = set(d) - KEYS
            if unknown:
                problems.add(loc, f"unknown keys {sorted(unknown)}")
            if "name" not in d or "regex" not in d:
                problems.add(loc, "a format needs name and regex")
                continue
            err = regex_error(d["regex"])
            if err:
                problems.add(loc, f"{d['name']}: regex does not compile: {err}")
                continue
            if not d["regex"].startswith("^"):
                problems.add(loc, f"{d['name']}: a format regex matches the head of a line and starts with ^")
            if layer == "line" and not d.get("source"):
                problems.add(loc, f"{d['name']}: a line format needs a source")
            json_fields = d.get("json") or {}
            if json_fields and (layer != "wrapper" or not isinstance(json_fields, dict)
                                or set(json_fields) - JSON_FIELDS or "text" not in json_fields):
                problems.add(loc, f"{d['name']}: `json` is a wrapper's table of fields ({sorted(JSON_FIELDS)},"
                                f" text included) to JSON keys")
                json_fields = {}
            samples = []
            for s in d.get("samples", []):
                fields = tuple(sorted((str(k), str(v)) for k, v in (s.get("fields") or {}).items()))
                samples.append((s["line"], fields))
            if not samples:
                problems.add(loc, f"{d['name']}: needs samples")
            out[layer].append(Format(
                layer=layer, name=d["name"], regex=d["regex"], source=d.get("source"),
                level_map=tuple(sorted((d.get("level_map") or {}).items())),
                first_for=tuple(d.get("first_for", [])), json_escaped=bool(d.get("json_escaped", False)),
                json_fields=_json_keys(json_fields), samples=tuple(samples), location=loc,
                quoted=bool(d.get("quoted", False)) and layer == "wrapper",
                keep=tuple(map(str, d.get("keep", []))), csv_quoted=bool(d.get("csv_quoted", False)),
                sparse=bool(d.get("sparse", False)) and layer == "wrapper",
                arrival=bool(d.get("arrival", False)) and layer == "wrapper"))
    sniff = _sniff_lines(data, text, path, problems)
    if problems:
        raise CatalogueError(f"{len(problems)} problem(s) in {path}: {problems[0]}", problems)
    return Formats(wrappers={f.name: f for f in out["wrapper"]}, prefixes=tuple(out["prefix"]),
                   lines=tuple(out["line"]), sniff=sniff)


def _sniff_lines(data: dict, text: str, path: Path, problems: Problems) -> dict[str, re.Pattern]:
    """The [[sniff]] regexes (Python `re`), each checked against its samples and near misses."""
    out = {}
    starts = table_starts(text, "sniff")
    for i, d in enumerate(data.get("sniff", [])):
        loc = SourceLocation(str(path), starts[i] if i < len(starts) else None)
        if set(d) - {"name", "regex", "samples", "no_match"} or "name" not in d or "regex" not in d:
            problems.add(loc, "a [[sniff]] table has name, regex, samples and no_match")
            continue
        try:
            rx = re.compile(d["regex"])
        except re.error as e:
            problems.add(loc, f"{d['name']}: regex does not compile: {e}")
            continue
        missed = [s for s in d.get("samples", []) if not rx.search(s)]
        caught = [s for s in d.get("no_match", []) if rx.search(s)]
        if not d.get("samples") or missed:
            problems.add(loc, f"{d['name']}: " + (f"sample {missed[0][:60]!r} does not match" if missed
                                                         else "needs samples"))
        elif caught:
            problems.add(loc, f"{d['name']}: near miss {caught[0][:60]!r} matches")
        else:
            out[d["name"]] = rx
    for name in SNIFF_LINES:
        if name not in out and not any(name in p.message for p in problems):
            problems.add(SourceLocation(str(path)), f"[[sniff]] {name!r} is missing (k3logs/ingest/sniff.py reads it)")
    return out


@lru_cache(maxsize=1)
def builtin_formats() -> Formats:
    """The built-in formats, checked once per content of formats.toml (and of this package) and kept in the cache
    folder: checking every regex with the Rust engine on each run cost a small bundle's analysis a tenth of its
    time."""
    path = data_dir("patterns") / "formats.toml"
    return kept("formats", content_key([path]), lambda: load_formats(path), lambda got: isinstance(got, Formats))
