"""Catalogue checks beyond the loader's: every sample of every signature replayed through the real line
parser and detector, near misses that must stay quiet, and collisions (one sample fired by a cause
signature of another category). Each check returns Issue objects (catalogue.Issue)."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import polars as pl

from k3logs import progress
from k3logs.captures.calls import load_toolcall_data
from k3logs.captures.prompt import load_prefix_data
from k3logs.catalogue.acceptance import load_acceptance_data
from k3logs.catalogue.formats import builtin_formats, load_formats
from k3logs.catalogue.landmarks import Landmark, load_landmarks
from k3logs.catalogue.read import Issue
from k3logs.catalogue.regexes import load_regexes
from k3logs.catalogue.signatures import Catalogue, Signature
from k3logs.catalogue.witnesses import load_witnesses
from k3logs.collect.plan import load_plan
from k3logs.diagnose.detect import detect, phase_marks
from k3logs.diff.model import load_data
from k3logs.errors import CatalogueError, SourceLocation
from k3logs.facts.data import load_facts_data
from k3logs.ingest.discover import Member
from k3logs.ingest.stream import Ingested, ingest_members
from k3logs.redact import load_rules
from k3logs.settings import Settings


def parse_text(text: str) -> pl.DataFrame:
    """Events of a small text as k3logs would parse it inside a bundle (sniffed, unwrapped, folded)."""
    return parse_texts([text])[0]


def parse_texts(texts: list[str]) -> list[pl.DataFrame]:
    """The events of each small text, each its own file of one bundle (sniffed, unwrapped and folded on its own),
    with `eid` numbering the rows of them all. One ingest: a text's fixed costs, its sniffing and every line
    format's regex compiled again, are most of the cost of a one-line text."""
    out = Ingested()
    members = [Member(f"sample-{i}.log", io.BytesIO(t.encode("utf-8"))) for i, t in enumerate(texts)]
    ingest_members(members, Settings(), None, builtin_formats(), out)
    parts = [ev for ev in out.events if ev.height]
    if not parts:
        return [pl.DataFrame() for _ in texts]
    ev = pl.concat(parts, how="diagonal_relaxed")
    for col, dtype in (("exc_types", pl.List(pl.String)), ("exc_messages", pl.List(pl.String))):
        if col not in ev.columns:
            ev = ev.with_columns(pl.lit(None, dtype).alias(col))
    ev = ev.with_row_index("eid")
    by_file = ev.partition_by("file", as_dict=True, maintain_order=True)
    return [by_file.get((m.path,), pl.DataFrame()) for m in members]


@dataclass(frozen=True)
class Fired:
    """What fires on one text: each signature's extracted fields (those with a value)."""
    fields: dict[str, dict]

    def of(self, sig: Signature) -> tuple[bool, dict, list[str]]:
        """Does `sig` fire, its fields, and the other signatures that fire."""
        return sig.id in self.fields, self.fields.get(sig.id, {}), sorted(set(self.fields) - {sig.id})


def fired_on(cat: Catalogue, texts: list[str]) -> list[Fired]:
    """What the catalogue fires on each text, each parsed as its own file, all detected in one pass (detection is
    row by row: a text's rows never meet another's)."""
    evs = parse_texts([t if t.endswith("\n") else t + "\n" for t in texts])
    got: list[dict[str, dict]] = [{} for _ in texts]
    parts = [ev for ev in evs if ev.height]
    if not parts:
        return [Fired(g) for g in got]
    owner = {eid: i for i, ev in enumerate(evs) if ev.height for eid in ev["eid"].to_list()}
    det = detect(pl.concat(parts, how="diagonal_relaxed"), cat)
    for eid, sig, fields in det.select("eid", "sig", "fields").iter_rows():
        # (a signature's first match on the text gives its fields, as a replay of one text read them)
        got[owner[eid]].setdefault(sig, {k: v for k, v in json.loads(fields).items() if v is not None})
    return [Fired(g) for g in got]


def fired(sig: Signature, cat: Catalogue, text: str) -> tuple[bool, dict, list[str]]:
    """Does `sig` fire on this sample? Also its extracted fields, and the other signatures that fire."""
    return fired_on(cat, [text])[0].of(sig)


def check_samples(cat: Catalogue) -> list[Issue]:
    issues: list[Issue] = []
    roles = {s.id: s for s in cat.signatures}
    texts = [t for sig in cat.signatures for t in (*(s.line for s in sig.match), *sig.no_match)]
    replayed = dict(zip(texts, fired_on(cat, texts)))
    for sig in cat.signatures:
        progress.current().item(sig.id)
        for sample in sig.match:
            ok, fields, others = replayed[sample.line].of(sig)
            if not ok:
                issues.append(Issue("error", "sample-match", f"{sig.id}: does not fire on its sample "
                                    f"{sample.line[:100]!r}", sig.location))
                continue
            for k, v in sample.fields:
                if fields.get(k) != v:
                    issues.append(Issue("error", "sample-fields", f"{sig.id}: field {k!r} is {fields.get(k)!r}, "
                                        f"sample says {v!r}", sig.location))
            if sig.role == "cause":
                rivals = [o for o in others if roles[o].role == "cause" and roles[o].category != sig.category]
                if rivals:
                    issues.append(Issue("warning", "collision", f"{sig.id}: its sample also fires cause "
                                        f"signature(s) of another category: {', '.join(rivals)}", sig.location))
        for text in sig.no_match:
            if replayed[text].of(sig)[0]:
                issues.append(Issue("error", "sample-no-match", f"{sig.id}: fires on its near miss {text[:100]!r}",
                                    sig.location))
    return issues


def check_landmarks(marks: tuple[Landmark, ...]) -> list[Issue]:
    """Every landmark sample replayed through the parser and the phase marks: it marks its landmark's phase
    (a sample an earlier landmark takes is an error too: the first listed wins), its near misses do not."""
    issues: list[Issue] = []
    for m in marks:
        for text, want in [(s, True) for s in m.samples] + [(s, False) for s in m.no_match]:
            ev = parse_text(text + "\n")
            got = phase_marks(ev)["mark"].to_list() if ev.height else []
            if (m.phase in got) is not want:
                what = f"marks {got[0] if got and got[0] else 'no phase'}, not {m.phase}" if want else \
                    f"marks {m.phase} on its near miss"
                issues.append(Issue("error", "sample-match" if want else "sample-no-match",
                                    f"landmark {m.phase}: sample {text[:80]!r} {what}", m.location))
    return issues


# each built-in pattern file besides the signatures, taxonomy and Xid table (load_catalogue checks those), with
# the loader that reads it for the analysis: a file its loader refuses is an issue at its file and line
FILE_LOADERS: dict[str, Callable[[Path], object]] = {
    "formats.toml": load_formats, "attribution.toml": load_witnesses, "acceptance.toml": load_acceptance_data,
    "facts.toml": load_facts_data, "collect.toml": load_plan, "diff.toml": load_data,
    "prefix.toml": load_prefix_data, "toolcalls.toml": load_toolcall_data, "secrets.toml": load_rules}


def check_files(folder: Path) -> list[Issue]:
    """Every built-in pattern file of `folder` read by its own loader, the named regexes of every file that
    has them (`[[regex]]`, catalogue/regexes.py) with their samples, and the landmarks replayed."""
    issues: list[Issue] = []
    for name, load in FILE_LOADERS.items():
        issues += _loaded(folder / name, load)
    for path in sorted(folder.glob("*.toml")):
        if _has_regex_tables(path):
            issues += _loaded(path, load_regexes)
    before = len(issues)
    marks = load_landmarks(folder / "landmarks.toml", issues)
    if len(issues) == before:
        issues += check_landmarks(marks)
    return issues


def _loaded(path: Path, load: Callable[[Path], object]) -> list[Issue]:
    """What `load` finds wrong in `path` (nothing: it loads)."""
    try:
        load(path)
    except CatalogueError as e:
        return e.problems or [Issue("error", "invalid", e.message, e.source or SourceLocation(str(path)))]
    except Exception as e:  # a loader that breaks on a file is a file it cannot read
        return [Issue("error", "invalid", f"{type(e).__name__}: {e}", SourceLocation(str(path)))]
    return []


def _has_regex_tables(path: Path) -> bool:
    try:
        return any(line.strip() == "[[regex]]" for line in path.read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return False
