"""Run the signature catalogue over the events: a literal pre-filter, then the Rust regex, one
vectorised pass per signature. A folded traceback is matched link by link (each exception of its
chain), so a chain that starts with a cause and ends with a symptom yields both."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from k3logs.catalogue.signatures import Catalogue
from k3logs.resources import data_dir
from k3logs.schema import at_rows

DETECTION_SCHEMA = {"eid": pl.UInt32, "link": pl.Int32, "part": pl.Int32, "sig": pl.String, "fields": pl.String}


def match_table(ev: pl.DataFrame) -> pl.DataFrame:
    """(eid, link, part, source, text): one row per event, or per line of each exception of a folded
    traceback (`link` = its place in the chain, `part` = the line of its message: 'Last error:' details
    of an NCCL exception come on the lines after the first)."""
    base = ev.select("eid", pl.lit(-1, pl.Int32).alias("link"), pl.lit(0, pl.Int32).alias("part"), "source",
                     pl.col("text"))
    if "exc_types" not in ev.columns or ev["exc_types"].is_null().all():
        return base
    tb = (ev.filter(pl.col("exc_types").is_not_null())
          .select("eid", "source", "exc_types", "exc_messages")
          .with_columns(pl.int_ranges(0, pl.col("exc_types").list.len()).cast(pl.List(pl.Int32)).alias("link"))
          .explode("exc_types", "exc_messages", "link")
          .with_columns(pl.col("exc_messages").str.split("\n").alias("_parts"))
          .with_columns(pl.int_ranges(0, pl.col("_parts").list.len()).cast(pl.List(pl.Int32)).alias("part"))
          .explode("_parts", "part")
          .select("eid", "link", "part", "source",
                  pl.when((pl.col("exc_types") == "") | (pl.col("part") > 0)).then(pl.col("_parts"))
                  .otherwise(pl.concat_str([pl.col("exc_types"), pl.lit(": "), pl.col("_parts")])).alias("text")))
    return pl.concat([base.filter(~pl.col("eid").is_in(tb["eid"].unique().implode())), tb])


def _without_listings(mt: pl.DataFrame, cat: Catalogue) -> pl.DataFrame:
    """The match table with what lists possibilities taken out: from a `veto = "after"` context signature's
    match to the end of its message (its later lines included). What comes before it still counts: 'CUDA
    unknown error - this may be due to ...' states a CUDA error, then guesses."""
    listings = [s for s in cat.signatures if s.veto == "after"]
    if not listings:
        return mt
    lits = sorted({lit for s in listings for lit in s.prefilter})
    rx = "|".join(f"(?:{s.regex})" for s in listings)
    hit = pl.col("text").str.contains_any(lits, ascii_case_insensitive=True) & pl.col("text").str.contains(rx)
    mt = mt.with_columns(hit.fill_null(False).alias("_listing"))
    if not mt["_listing"].any():
        return mt.drop("_listing")
    first = pl.when(pl.col("_listing")).then(pl.col("part")).min().over("eid", "link")
    cut = pl.col("text").str.replace(f"(?s)((?:{rx})).*", "${1}")  # (the listing's own words stay, for itself)
    return (mt.filter(first.is_null() | (pl.col("part") <= first))
            .with_columns(pl.when(pl.col("_listing")).then(cut).otherwise(pl.col("text")).alias("text"))
            .drop("_listing"))


def detect(ev: pl.DataFrame, cat: Catalogue) -> pl.DataFrame:
    """Detections (eid, link, sig, fields as JSON) for every signature that matches an event."""
    mt = _without_listings(match_table(ev), cat)
    # one pass for every signature's literals: a signature none of whose literals occur is not tried at all
    literals = sorted({lit for sig in cat.signatures for lit in sig.prefilter})
    found = set(mt["text"].str.extract_many(literals, overlapping=True).explode().drop_nulls().unique()
                .to_list()) if mt.height else set()
    # the lines a user_data signature matches (logged prompts) are set aside whole (decide): a cause or
    # symptom is not even tried on them, which on request logs is most of the regex work
    user = [s for s in cat.signatures if s.user_data and not found.isdisjoint(s.prefilter)]
    unquoted = mt
    if user and mt.height:
        quoted = pl.any_horizontal([pl.col("text").str.contains_any(list(s.prefilter))
                                    & pl.col("text").str.contains(s.regex) for s in user]).fill_null(False)
        unquoted = mt.filter(~quoted)
    out = []
    for sig in cat.signatures:
        if found.isdisjoint(sig.prefilter):
            continue
        rows = mt if sig.role == "context" or sig.table == "xid" else unquoted
        cand = rows.filter(pl.col("text").str.contains_any(list(sig.prefilter)))
        if sig.sources:
            cand = cand.filter(pl.col("source").is_in(list(sig.sources)))
        if cand.is_empty():
            continue
        hit = cand.filter(pl.col("text").str.contains(sig.regex))
        if hit.is_empty():
            continue
        names = sig.fields
        if names:
            fields = hit.select(pl.col("text").str.extract_groups(sig.regex).struct.json_encode().alias("fields"))
            hit = hit.with_columns(fields["fields"])
        else:
            hit = hit.with_columns(pl.lit("{}").alias("fields"))
        out.append(hit.select("eid", "link", "part", pl.lit(sig.id).alias("sig"), "fields"))
    if not out:
        return pl.DataFrame(schema=DETECTION_SCHEMA)
    return pl.concat(out).cast(DETECTION_SCHEMA).sort(["eid", "link", "part", "sig"])


# ------------------------------------------------------------------------------------------------
# lifecycle landmarks and the lines kept for attribution and facts
# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Landmark:
    phase: str
    prefilter: tuple[str, ...]
    regex: str
    restart: bool = False
    progress: bool = True   # the process is doing its work (landmarks.toml [progress]); restarts and shutdown never


@lru_cache(maxsize=1)
def _landmark_data() -> dict:
    return tomllib.loads((data_dir("patterns") / "landmarks.toml").read_text(encoding="utf-8"))


def landmarks() -> tuple[tuple[Landmark, ...], tuple[str, ...]]:
    data = _landmark_data()
    marks = tuple(Landmark(d["phase"], tuple(d["prefilter"]), d["regex"], bool(d.get("restart", False)),
                           bool(d.get("progress", True)) and not d.get("restart") and d["phase"] != "shutdown")
                  for d in data.get("landmark", []))
    progress = data.get("progress", {})
    keep = tuple(data.get("keep", {}).get("anchors", [])) + tuple(progress.get("prefilter", [])) + \
        tuple(data.get("joined", {}).get("prefilter", []))
    return marks, keep


@dataclass(frozen=True)
class NamedCause:
    regex: re.Pattern      # a line that names what caused it; the named group `field` holds the value
    field: str


@lru_cache(maxsize=1)
def named_causes() -> tuple[NamedCause, ...]:
    return tuple(NamedCause(re.compile(d["regex"]), d["field"]) for d in _landmark_data().get("named_cause", []))


@dataclass(frozen=True)
class Family:
    signature: str   # a device's burst of this signature's matches: the first is the cause, the rest follow it
    field: str       # the device (the match's field)
    seconds: float   # how soon after the first a match is still of its burst


@lru_cache(maxsize=1)
def families() -> tuple[Family, ...]:
    return tuple(Family(d["signature"], d["field"], float(d["seconds"])) for d in _landmark_data().get("family", []))


@dataclass(frozen=True)
class OutcomeData:
    fatal: frozenset[str]        # symptom categories that show a process died
    vanished: frozenset[str]     # those that name a worker that is gone
    killed_signature: str        # the signature a vanished worker's report takes its words from
    processes: str               # the deployment's process names (comm), a regex
    process_categories: frozenset[str]  # categories of kernel lines that name their process


@lru_cache(maxsize=1)
def outcome_data() -> OutcomeData:
    d = _landmark_data().get("outcome", {})
    return OutcomeData(frozenset(d.get("fatal", [])), frozenset(d.get("vanished", [])), d.get("killed_signature", ""),
                       d.get("processes", ".*"), frozenset(d.get("process_categories", [])))


@lru_cache(maxsize=1)
def joined() -> tuple[frozenset[str], tuple[str, ...], str] | None:
    """(categories, prefilter, regex) of landmarks.toml [joined]: a meeting's failures and the lines that
    show its group formed."""
    j = _landmark_data().get("joined")
    return (frozenset(j["categories"]), tuple(j["prefilter"]), j["regex"]) if j else None


@lru_cache(maxsize=1)
def progress_regex() -> tuple[tuple[str, ...], str] | None:
    """(prefilter, regex) of the lines that show a process doing its work besides its landmarks."""
    p = _landmark_data().get("progress")
    return (tuple(p["prefilter"]), p["regex"]) if p else None


def frame_phase(frames: list[str] | None) -> str | None:
    """The phase named by the innermost stack frame that landmarks.toml [frames] knows; a forward pass
    (a serving frame) that a startup step runs (profile_run's dummy batch) is that step's."""
    table = {fn: phase for phase, fns in _landmark_data().get("frames", {}).items() for fn in fns}
    known = [table[fn] for fn in frames or [] if fn in table]   # outermost first
    startup = [p for p in known if p != "serving"]
    return (startup[-1] if known and known[-1] == "serving" and startup else known[-1]) if known else None


def phase_marks(ev: pl.DataFrame) -> pl.DataFrame:
    """Per event: the phase its line marks the start of (`mark`, null for most lines), whether it starts a
    new attempt of the server (`restart`), and whether it shows its process doing its work (`progress`)."""
    marks, _ = landmarks()
    expr, restart, progress = pl.lit(None, pl.String), pl.lit(False), pl.lit(False)
    for m in reversed(marks):  # the first listed wins on a line that matches two
        hit = pl.col("text").str.contains_any(list(m.prefilter)) & pl.col("text").str.contains(m.regex)
        expr = pl.when(hit).then(pl.lit(m.phase)).otherwise(expr)
        restart = pl.when(hit).then(pl.lit(m.restart)).otherwise(restart)
        progress = pl.when(hit).then(pl.lit(m.progress)).otherwise(progress)
    if (extra := progress_regex()) is not None:
        progress = progress | (pl.col("text").str.contains_any(list(extra[0])) & pl.col("text").str.contains(extra[1]))
    met = pl.lit(False)
    if (j := joined()) is not None:
        met = pl.col("text").str.contains_any(list(j[1])) & pl.col("text").str.contains(j[2])
    columns = [expr.alias("mark"), restart.fill_null(False).alias("restart"),
               progress.fill_null(False).alias("progress"), met.fill_null(False).alias("joined")]
    # the few lines holding one of the literals are tried, in one pass over the text (not one per landmark:
    # on logged prompts kilobytes long that was most of the time); the others mark nothing
    lits = sorted({lit for m in marks for lit in m.prefilter} | set(extra[0] if extra else ())
                  | set(j[1] if j else ()))
    idx = ev.select(pl.arg_where(pl.col("text").str.contains_any(lits).fill_null(False)))[:, 0]
    some = ev[idx].select(columns)
    return pl.DataFrame([(at_rows(ev.height, idx, some[c]) if c == "mark" else
                          at_rows(ev.height, idx, some[c]).fill_null(False)).alias(c) for c in some.columns])


def anchors(cat: Catalogue, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every literal a line must contain to be worth parsing in `analyze`."""
    marks, keep = landmarks()
    lits = {lit for s in cat.signatures for lit in s.prefilter}
    lits |= {lit for s in cat.signatures if s.recovery for lit in s.recovery.prefilter}
    lits |= {lit for m in marks for lit in m.prefilter}
    lits |= set(keep) | set(extra)
    return _minimal(tuple(sorted(lits)))


@lru_cache(maxsize=16)
def _minimal(lits: tuple[str, ...]) -> tuple[str, ...]:
    """A literal that contains another adds nothing to the filter: drop it (fewer alternatives, faster scan)."""
    minimal: list[str] = []
    for lit in sorted(lits, key=len):
        if not any(m in lit for m in minimal):
            minimal.append(lit)
    return tuple(sorted(minimal))
