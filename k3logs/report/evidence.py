"""A few lines of the bundle around every line the report cites (the first cause, the timeline, symptoms,
kernel events, the evidence of checks, of the recovery ladder and of the acceptance sections), read again
from the bundle. Only the files cited are read, each only up to its last cited line, and only when asked
(the HTML report): the analysis itself stays one pass over the bundle. The lines are shown as stored
(physical lines, the numbering `grep -n` uses), with terminal colours removed; secrets are redacted with the
rest of the report, and lines that are only key material are not shown at all."""
from __future__ import annotations

import re

import polars as pl

from k3logs.contract import Excerpt, Report
from k3logs.ingest.discover import Bundle
from k3logs.ingest.lines import iter_line_batches, open_text
from k3logs.ingest.streams import peek
from k3logs.settings import Settings

MAX_SPAN = 40          # a cited multi-line event (a traceback) is shown up to this many lines
MAX_CITES = 400        # excerpts per report at most
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")


def _ref(ref: str | None) -> tuple[str, int] | None:
    """'file:line' (as checks and the ladder cite) -> (file, line)."""
    if not ref:
        return None
    file, _, line = ref.rpartition(":")
    return (file, int(line)) if file and line.isdigit() and int(line) > 0 else None


def citations(report: Report, before: int, after: int) -> dict[tuple[str, int], tuple[int, int]]:
    """(file, line) of every cited line -> the range of lines to show around it; the first cause first."""
    out: dict[tuple[str, int], tuple[int, int]] = {}

    def add(file: str | None, line: int | None, first: int | None = None, last: int | None = None) -> None:
        if not file or not line or line < 1 or (file, line) in out or len(out) >= MAX_CITES:
            return
        first = line if first is None or line - first > MAX_SPAN else min(first, line)
        last = line if last is None else min(max(last, line), line + MAX_SPAN)
        out[(file, line)] = (max(1, first - before), last + after)

    fc = report.first_causal
    if fc is not None:
        add(fc.file, fc.line, fc.span[0], fc.span[1])
    for t in report.timeline:
        add(t.file, t.line)
    for s in report.symptoms:
        add(s.file, s.line)
    for k in report.kernel_events:
        add(k.file, k.line)
    refs = [c.evidence for c in report.environment.checks] + [g.evidence for g in report.recovery_ladder]
    if report.load_at_failure:
        refs.append(report.load_at_failure.get("evidence"))
    if report.capacity is not None:  # the reports show the prefix-cache section beside the capacity one
        refs += [report.prefix_cache.enabled_evidence, report.prefix_cache.evidence]
        refs += [f.evidence for f in report.capacity.saturation + report.capacity.memory_creep]
    if report.verdict is not None:
        refs += [c.evidence for c in report.verdict.criteria]
    for ref in refs:
        if (fl := _ref(ref)) is not None:
            add(*fl)
    return out


def _clean(text: str) -> str:
    text = ANSI.sub("", text)
    if "\r" in text:  # a progress bar redrawn in place: what the terminal showed last
        text = next((p for p in reversed(text.split("\r")) if p.strip()), "")
    return text  # (redacted by the gate out, lines that are only key material hidden, then cut)


def read_excerpts(bundle: Bundle, report: Report, lines: int, settings: Settings) -> list[Excerpt]:
    """Excerpts of `lines` lines before and after each cited line. `bundle` is the one the analysis
    read (its member names are final, so cited paths map back to stored names)."""
    cites = citations(report, lines, lines)
    if not cites:
        return []
    wanted: dict[str, list[tuple[int, int]]] = {}
    for (file, _), rng in cites.items():
        wanted.setdefault(file, []).append(rng)
    stored = {bundle.display(n): n for n in bundle.names}
    by_stored = {stored[f]: f for f in wanted if f in stored}
    found: dict[str, dict[int, str]] = {}
    again = Bundle(bundle.path, settings.limits)
    for member in again.members():
        file = by_stored.get(member.path)
        if file is None:
            continue
        need = pl.concat([pl.int_range(a, b + 1, dtype=pl.Int64, eager=True) for a, b in wanted[file]]).unique()
        last = int(need.max())
        got: dict[int, str] = {}
        head, stream = peek(member.stream, 512)
        for batch in iter_line_batches(open_text(stream, head), settings.batch_bytes, settings.limits.max_line_bytes):
            hit = batch.filter(pl.col("line").is_in(need.implode()))
            got.update(zip(hit["line"].to_list(), hit["raw"].to_list()))
            if batch.height and int(batch["line"][-1]) >= last:
                break  # the rest of the file is not needed
        found[file] = got
    out = []
    for (file, line), (a, b) in sorted(cites.items()):
        got = found.get(file, {})
        if line not in got:
            continue  # not read (skipped by a limit): nothing to show rather than something wrong
        # the lines that exist, contiguous around the cited one (a file may end sooner)
        lo = line
        while lo - 1 in got and lo - 1 >= a:
            lo -= 1
        hi = line
        while hi + 1 in got and hi + 1 <= b:
            hi += 1
        out.append(Excerpt(file, line, lo, [_clean(got[n]) for n in range(lo, hi + 1)]))
    return out
