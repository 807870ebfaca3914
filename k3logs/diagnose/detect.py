"""Run the signature catalogue over the events: a literal pre-filter, then the Rust regex, one
vectorised pass per signature. A folded traceback is matched link by link (each exception of its
chain), so a chain that starts with a cause and ends with a symptom yields both."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import polars as pl

from k3logs.catalogue.landmarks import Landmark, builtin_landmarks, landmark_data
from k3logs.catalogue.read import Prefiltered
from k3logs.catalogue.signatures import Catalogue
from k3logs.schema import PHASES, at_rows

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


def _literals_seen(text: pl.Series, cat: Catalogue):
    """One pass over the lines for every signature's literals (those of a case-insensitive regex in any case):
    returns whether a signature's literals occur at all (a signature none of whose literals occur is not
    tried)."""
    exact = sorted({lit for s in cat.signatures if not s.case_insensitive for lit in s.prefilter})
    folded = sorted({lit.lower() for s in cat.signatures if s.case_insensitive for lit in s.prefilter})

    def found(lits: list[str], any_case: bool) -> set[str]:
        if not lits or not len(text):
            return set()
        got = text.str.extract_many(lits, overlapping=True, ascii_case_insensitive=any_case).explode()
        return set((got.str.to_lowercase() if any_case else got).drop_nulls().unique().to_list())

    found_exact, found_folded = found(exact, False), found(folded, True)
    return lambda s: (not found_folded.isdisjoint(lit.lower() for lit in s.prefilter) if s.case_insensitive
                      else not found_exact.isdisjoint(s.prefilter))


def _matching_rows(sig, quoted: bool) -> pl.Expr:
    """The rows of the match table that `sig` matches, as one list: its literals and sources first, then its
    regex on those rows only. The lines a user_data signature matches (logged prompts, column `_quoted`) are
    set aside whole (decide): a cause or symptom is not tried on them (context signatures and Xid lines are)."""
    m = holds_prefilter(sig).fill_null(False)
    if sig.sources:
        m = m & pl.col("source").is_in(list(sig.sources))
    if quoted and not (sig.role == "context" or sig.table == "xid"):
        m = m & ~pl.col("_quoted")
    found = pl.col("text").filter(m).str.contains(sig.regex).fill_null(False)
    return pl.int_range(pl.len(), dtype=pl.UInt32).filter(m).filter(found).implode()


def holds_prefilter(p: Prefiltered) -> pl.Expr:
    """Whether a line holds one of `p`'s literals (in any case where its regex is case-insensitive)."""
    return pl.col("text").str.contains_any(list(p.prefilter), ascii_case_insensitive=p.case_insensitive)


def detect(ev: pl.DataFrame, cat: Catalogue) -> pl.DataFrame:
    """Detections (eid, link, sig, fields as JSON) for every signature that matches an event."""
    mt = _without_listings(match_table(ev), cat)
    seen = _literals_seen(mt["text"], cat)
    # the lines a user_data signature matches (logged prompts) are set aside whole (decide): a cause or
    # symptom is not even tried on them, which on request logs is most of the regex work
    user = [s for s in cat.signatures if s.user_data and seen(s)]
    if user and mt.height:
        mt = mt.with_columns(pl.any_horizontal([holds_prefilter(s) & pl.col("text").str.contains(s.regex)
                                                for s in user]).fill_null(False).alias("_quoted"))
    tried = [sig for sig in cat.signatures if seen(sig)]
    if not tried or not mt.height:
        return pl.DataFrame(schema=DETECTION_SCHEMA)
    # every signature tried in one query (a query per signature paid its fixed cost fifteen times a bundle)
    rows = mt.select([_matching_rows(sig, "_quoted" in mt.columns).alias(str(i))
                      for i, sig in enumerate(tried)]).row(0)
    out = []
    for sig, at in zip(tried, rows):
        if not at:
            continue
        hit = mt[at]
        if sig.fields:
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
def landmarks() -> tuple[tuple[Landmark, ...], tuple[str, ...]]:
    """The lifecycle landmarks, and the literals of the other lines analyze keeps for attribution and facts."""
    data = landmark_data()
    progress = data.get("progress", {})
    keep = tuple(data.get("keep", {}).get("anchors", [])) + tuple(progress.get("prefilter", [])) + \
        tuple(data.get("joined", {}).get("prefilter", []))
    return builtin_landmarks(), keep


@dataclass(frozen=True)
class NamedCause:
    regex: re.Pattern      # a line that names what caused it; the named group `field` holds the value
    field: str


@lru_cache(maxsize=1)
def named_causes() -> tuple[NamedCause, ...]:
    return tuple(NamedCause(re.compile(d["regex"]), d["field"]) for d in landmark_data().get("named_cause", []))


@dataclass(frozen=True)
class Family:
    signature: str   # a device's burst of this signature's matches: the first is the cause, the rest follow it
    field: str       # the device (the match's field)
    seconds: float   # how soon after the first a match is still of its burst


@lru_cache(maxsize=1)
def families() -> tuple[Family, ...]:
    return tuple(Family(d["signature"], d["field"], float(d["seconds"])) for d in landmark_data().get("family", []))


@dataclass(frozen=True)
class OutcomeData:
    fatal: frozenset[str]        # symptom categories that show a process died
    vanished: frozenset[str]     # those that name a worker that is gone
    killed_signature: str        # the signature a vanished worker's report takes its words from
    processes: str               # the deployment's process names (comm), a regex
    process_categories: frozenset[str]  # categories of kernel lines that name their process
    request_level: frozenset[str] = frozenset()  # symptoms of one request failing
    request_systematic: int = 3  # the same request failure this often in one process fails a kind of request
    unready: frozenset[str] = frozenset()  # symptoms that say the server never became ready (whatever it printed)
    shed_status: frozenset[str] = frozenset()  # HTTP statuses that refuse a request for capacity (server full)
    run_args: str | None = None  # the line that shows the arguments an attempt ran with (group 1: the arguments)
    clean_exits: frozenset[str] = frozenset()  # the exit codes of a container's run that ended cleanly
    deployment_run: str = "(?!)"  # a container, image, unit or command of the deployment's own (a regex)
    orchestrator_only: frozenset[str] = frozenset()  # symptoms only an orchestrator prints of a run that failed
    about_node_fields: tuple[str, ...] = ()  # a signature's fields that name the node a line is about
    asked_to_stop: str = "(?!)"  # a shutdown landmark that says the stop came from outside (a signal, a cancel)
    interrupt_echo: str = "(?!)"  # the row a terminal's echo of Ctrl-C becomes: the stop line it begins was asked
    head_process: str = "(?!)"  # the process name of the deployment's API server (its head node's)
    head_line: str = "(?!)"  # a line only the API server prints
    worker_ready: str = "(?!)"  # a serving landmark a worker prints at the end of its own start (no server's)
    reported_node_fields: tuple[str, ...] = ()  # fields that make a line a record from outside about a node


@lru_cache(maxsize=1)
def outcome_data() -> OutcomeData:
    d = landmark_data().get("outcome", {})
    return OutcomeData(frozenset(d.get("fatal", [])), frozenset(d.get("vanished", [])), d.get("killed_signature", ""),
                       d.get("processes", ".*"), frozenset(d.get("process_categories", [])),
                       frozenset(d.get("request_level", [])), int(d.get("request_systematic", 3)),
                       frozenset(d.get("unready", [])), frozenset(str(x) for x in d.get("shed_status", [])),
                       d.get("run_args"), frozenset(str(x) for x in d.get("clean_exits", [])),
                       d.get("deployment_run", "(?!)"), frozenset(d.get("orchestrator_only", [])),
                       tuple(d.get("about_node_fields", [])), d.get("asked_to_stop", "(?!)"),
                       d.get("interrupt_echo", "(?!)"), d.get("head_process", "(?!)"), d.get("head_line", "(?!)"),
                       d.get("worker_ready", "(?!)"), tuple(d.get("reported_node_fields", [])))


@lru_cache(maxsize=1)
def joined() -> tuple[frozenset[str], tuple[str, ...], str] | None:
    """(categories and signatures, prefilter, regex) of landmarks.toml [joined]: a meeting's failures and the lines
    that show its group formed."""
    j = landmark_data().get("joined")
    return (frozenset(j["categories"]) | frozenset(j.get("signatures", [])), tuple(j["prefilter"]), j["regex"]) \
        if j else None


@lru_cache(maxsize=1)
def progress_regex() -> tuple[tuple[str, ...], str] | None:
    """(prefilter, regex) of the lines that show a process doing its work besides its landmarks."""
    p = landmark_data().get("progress")
    return (tuple(p["prefilter"]), p["regex"]) if p else None


def frame_phase(frames: list[str] | None, observed: str | None = None) -> str | None:
    """The phase named by the innermost stack frame that landmarks.toml [frames] knows; a forward pass
    (a serving frame) that a startup step runs (profile_run's dummy batch) is that step's. The landmark phase
    `observed` stands where it lies within the steps that frame's function runs ([frame_reach])."""
    data = landmark_data()
    table = {fn: phase for phase, fns in data.get("frames", {}).items() for fn in fns}
    known = [fn for fn in frames or [] if fn in table]   # outermost first
    startup = [fn for fn in known if table[fn] != "serving"]
    fn = (startup[-1] if table[known[-1]] == "serving" and startup else known[-1]) if known else None
    if fn is None:
        return None
    reach = data.get("frame_reach", {}).get(fn, table[fn])
    return observed if observed in PHASES[PHASES.index(table[fn]):PHASES.index(reach) + 1] else table[fn]


def phase_marks(ev: pl.DataFrame) -> pl.DataFrame:
    """Per event: the phase its line marks the start of (`mark`, null for most lines), whether it starts a
    new attempt of the server (`restart`), and whether it shows its process doing its work (`progress`)."""
    marks, _ = landmarks()
    # each landmark's regex runs once, into a column of its own (the three columns built from them below
    # would each run it again, and a regex is compiled anew in every query), on rows that hold a literal
    # of some landmark already (`idx`)
    tried = [pl.col("text").str.contains(m.regex).alias(f"_mark{i}") for i, m in enumerate(marks)]
    expr, restart, progress = pl.lit(None, pl.String), pl.lit(False), pl.lit(False)
    for i, m in reversed(list(enumerate(marks))):  # the first listed wins on a line that matches two
        hit = pl.col(f"_mark{i}")
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
    some = ev[idx].select("text", *tried).select(columns)
    return pl.DataFrame([(at_rows(ev.height, idx, some[c]) if c == "mark" else
                          at_rows(ev.height, idx, some[c]).fill_null(False)).alias(c) for c in some.columns])


def folded_anchors(cat: Catalogue) -> tuple[str, ...]:
    """The literals of anchors() a line may hold in any case: those of case-insensitive regexes."""
    return tuple(sorted({lit for p in _prefiltered(cat) if p.case_insensitive for lit in p.prefilter}))


def _prefiltered(cat: Catalogue) -> list[Prefiltered]:
    return [*cat.signatures, *(s.recovery for s in cat.signatures if s.recovery)]


def anchors(cat: Catalogue, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Every literal a line must contain to be worth parsing in `analyze` (see folded_anchors)."""
    marks, keep = landmarks()
    lits = {lit for p in _prefiltered(cat) for lit in p.prefilter}
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
