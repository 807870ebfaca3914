"""Catalogue checks beyond the loader's: every sample of every signature replayed through the real line
parser and detector, near misses that must stay quiet, and collisions (one sample fired by a cause
signature of another category). Each check returns Issue objects (catalogue.Issue)."""
from __future__ import annotations

import io
import json

import polars as pl

from k3logs import progress
from k3logs.catalogue.formats import builtin_formats
from k3logs.catalogue.signatures import Catalogue, Signature
from k3logs.catalogue.read import Issue
from k3logs.diagnose.detect import detect
from k3logs.ingest.discover import Member
from k3logs.ingest.stream import ingest_members, Ingested
from k3logs.settings import Settings


def parse_text(text: str) -> pl.DataFrame:
    """Events of a small text as k3logs would parse it inside a bundle (sniffed, unwrapped, folded)."""
    out = Ingested()
    ingest_members([Member("sample.log", io.BytesIO(text.encode("utf-8")))], Settings(), None, builtin_formats(), out)
    if not out.events:
        return pl.DataFrame()
    ev = out.events[0]
    for col, dtype in (("exc_types", pl.List(pl.String)), ("exc_messages", pl.List(pl.String))):
        if col not in ev.columns:
            ev = ev.with_columns(pl.lit(None, dtype).alias(col))
    return ev.with_row_index("eid")


def fired(sig: Signature, cat: Catalogue, text: str) -> tuple[bool, dict, list[str]]:
    """Does `sig` fire on this sample? Also its extracted fields, and the other signatures that fire."""
    ev = parse_text(text if text.endswith("\n") else text + "\n")
    if ev.is_empty():
        return False, {}, []
    det = detect(ev, cat)
    mine = det.filter(pl.col("sig") == sig.id)
    fields = {}
    if mine.height:
        fields = {k: v for k, v in json.loads(mine["fields"][0]).items() if v is not None}
    others = sorted(set(det.filter(pl.col("sig") != sig.id)["sig"].to_list()))
    return mine.height > 0, fields, others


def check_samples(cat: Catalogue) -> list[Issue]:
    issues: list[Issue] = []
    roles = {s.id: s for s in cat.signatures}
    for sig in cat.signatures:
        progress.current().item(sig.id)
        for sample in sig.match:
            ok, fields, others = fired(sig, cat, sample.line)
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
            ok, _, _ = fired(sig, cat, text)
            if ok:
                issues.append(Issue("error", "sample-no-match", f"{sig.id}: fires on its near miss {text[:100]!r}",
                                    sig.location))
    return issues
