"""patterns/landmarks.toml: the lifecycle landmarks (a line that shows a process entered a phase), checked as
signatures are: a known phase, literals, a regex the Rust engine compiles, samples that hold a literal and that
the regex matches (evaluate/patterns.py then replays them through the phase marks). The file's other tables
(keep anchors, progress, frames, the outcome's words) are read as they are by diagnose/detect.py."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir
from k3logs.schema import PHASES

from .read import (Issue, Prefiltered, holds_literal, key_line, read_toml, regex_error, rust_line_problem,
                   table_starts)

KEYS = {"phase", "prefilter", "regex", "samples", "no_match", "restart", "progress"}
# the [[line]] names k3logs/diagnose/findings.py and phases.py read
LINES = ("exception_line", "engine_stats", "worker_process")


@dataclass(frozen=True)
class Landmark(Prefiltered):
    phase: str
    prefilter: tuple[str, ...]
    regex: str
    restart: bool = False   # begins a new attempt of the server on its node
    progress: bool = True   # the process is doing its work (landmarks.toml [progress]); restarts and shutdown never
    samples: tuple[str, ...] = ()
    no_match: tuple[str, ...] = ()   # near misses: lines that must not mark this phase
    location: SourceLocation = field(default=SourceLocation("<memory>"), compare=False)


def builtin_path() -> Path:
    return data_dir("patterns") / "landmarks.toml"


@lru_cache(maxsize=1)
def landmark_data() -> dict:
    """The built-in file's tables, checked once (a broken file is an error, not a silent default)."""
    issues: list[Issue] = []
    got = read_toml(builtin_path(), issues)
    marks = _landmarks(*got, builtin_path(), issues) if got else ()
    lines = _lines(*got, builtin_path(), issues) if got else {}
    if issues or got is None:
        raise CatalogueError(f"{builtin_path()} is invalid: {issues[0] if issues else 'unreadable'}", issues,
                             issues[0].location if issues else SourceLocation(str(builtin_path())))
    return {**got[0], "_landmarks": marks, "_lines": lines}


def builtin_landmarks() -> tuple[Landmark, ...]:
    return landmark_data()["_landmarks"]


def decision_line(name: str) -> str:
    """The regex of a [[line]] the decision reads (Rust syntax)."""
    return landmark_data()["_lines"][name]


def load_landmarks(path: Path, issues: list[Issue]) -> tuple[Landmark, ...]:
    """The [[landmark]] tables of `path` (its [[line]] tables checked too); every problem goes to `issues` with
    its file and line."""
    got = read_toml(path, issues)
    if got is None:
        return ()
    _lines(*got, path, issues)
    _frames(got[0], path, issues)
    return _landmarks(*got, path, issues)


def _frames(data: dict, path: Path, issues: list[Issue]) -> None:
    """[frames] names phases; a [frame_reach] function is a frame's, and reaches no earlier than its phase."""
    table = {fn: p for p, fns in data.get("frames", {}).items() for fn in fns}
    bad = [f"[frames] {p!r} is no phase" for p in data.get("frames", {}) if p not in PHASES]
    for fn, reach in data.get("frame_reach", {}).items():
        if fn not in table or reach not in PHASES or PHASES.index(reach) < PHASES.index(table[fn]):
            bad.append(f"[frame_reach] {fn} = {reach!r}: needs a [frames] function and a phase no earlier than its")
    issues += [Issue("error", "frames", b, SourceLocation(str(path))) for b in bad]


def _lines(data: dict, text: str, path: Path, issues: list[Issue]) -> dict[str, str]:
    out = {}
    starts = table_starts(text, "line")
    for i, d in enumerate(data.get("line", [])):
        where = SourceLocation(str(path), starts[i] if i < len(starts) else None)
        if not isinstance(d, dict) or set(d) - {"name", "regex", "samples", "no_match"} or "regex" not in d:
            issues.append(Issue("error", "line", "a [[line]] table has name, regex, samples and no_match", where))
        elif (problem := rust_line_problem(d)) is not None:
            issues.append(Issue("error", "line", f"{d.get('name')}: {problem}", where))
        else:
            out[str(d.get("name"))] = d["regex"]
    issues += [Issue("error", "line", f"[[line]] {name!r} is missing (k3logs/diagnose reads it)",
                     SourceLocation(str(path))) for name in LINES if name not in out]
    return out


def _landmarks(data: dict, text: str, path: Path, issues: list[Issue]) -> tuple[Landmark, ...]:
    entries = data.get("landmark", [])
    starts = table_starts(text, "landmark")
    out = []
    for i, d in enumerate(entries if isinstance(entries, list) else []):
        start = starts[i] if i < len(starts) else 1
        end = starts[i + 1] if i + 1 < len(starts) else None
        where = SourceLocation(str(path), start)

        def problem(message: str, key: str | None = None, code: str = "landmark") -> None:
            line = key_line(text, start, end, key) if key else start
            issues.append(Issue("error", code, f"landmark {i + 1}: {message}", SourceLocation(str(path), line)))

        if not isinstance(d, dict):
            problem("is not a table")
            continue
        for key in sorted(set(d) - KEYS):
            problem(f"unknown key {key!r}", key)
        phase, regex = d.get("phase"), d.get("regex")
        prefilter = tuple(str(p) for p in d.get("prefilter", []) if isinstance(p, str) and p)
        samples = tuple(str(s) for s in d.get("samples", []) if isinstance(s, str))
        no_match = tuple(str(s) for s in d.get("no_match", []) if isinstance(s, str))
        if phase not in PHASES:
            problem(f"phase {phase!r} is none of {', '.join(PHASES)}", "phase")
        if not prefilter:
            problem("needs at least one prefilter literal", "prefilter")
        if not isinstance(regex, str) or not regex:
            problem("regex must be a non-empty string", "regex")
            continue
        if (err := regex_error(regex)) is not None:
            problem(f"regex does not compile in the Rust engine: {err}", "regex", "regex")
            continue
        if not samples:
            problem("needs at least one sample line", "samples", "samples")
        mark = Landmark(str(phase), prefilter, regex, bool(d.get("restart", False)),
                        bool(d.get("progress", True)) and not d.get("restart") and phase != "shutdown", samples, no_match,
                        where)
        for s in samples:
            if prefilter and not holds_literal(prefilter, s, mark.case_insensitive):
                problem(f"sample {s[:80]!r} contains none of the prefilter literals", "samples", "prefilter-coverage")
        out.append(mark)
    return tuple(out)
