"""Load patterns/ (taxonomy, signatures, Xid table) into frozen dataclasses that validate themselves.

Every problem carries its file and line. `load_catalogue(..., collect_errors=True)` returns the catalogue
and the full list of problems so that `k3logs signatures check` can report them all in one run.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from k3logs.errors import SourceLocation
from k3logs.schema import PHASES, ROLES

from .read import Issue, Prefiltered, holds_literal, key_line, read_toml, regex_error, table_starts

ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
FORBIDDEN_PREFILTER_CHARS = set('"\\<>&')
SCOPES = ("node", "rank", "bundle")
TABLES = ("xid",)
XID_BLAMES = ("hardware", "driver", "application", "consequence", "informational")
SEVERITIES = ("critical", "error", "warning", "info")

SIGNATURE_KEYS = {
    "id", "category", "title", "role", "prefilter", "regex", "sources", "phase", "phase_category",
    "explains", "scope", "table", "priority", "explanation", "remediation", "references", "samples", "veto",
    "after", "recovery", "user_data", "states", "unready", "persists", "node_wide", "at_frame", "lags",
}
VETOES = ("line", "after")
REQUIRED_KEYS = ("id", "category", "title", "role", "prefilter", "regex", "samples")


@dataclass(frozen=True)
class Sample:
    line: str
    fields: tuple[tuple[str, str], ...] = ()


def named_groups(regex: str) -> tuple[str, ...]:
    """The names of a regex's named groups, in order."""
    return tuple(re.findall(r"\(\?P<(\w+)>", regex))


@dataclass(frozen=True)
class Recovery(Prefiltered):
    """The line that says a failed device is back (its fields name the same device)."""

    prefilter: tuple[str, ...]
    regex: str
    samples: tuple[str, ...] = ()

    @property
    def fields(self) -> tuple[str, ...]:
        return named_groups(self.regex)


@dataclass(frozen=True)
class Signature(Prefiltered):
    id: str
    category: str
    title: str
    role: str
    prefilter: tuple[str, ...]
    regex: str
    sources: tuple[str, ...] = ()
    phase: tuple[str, ...] = ()
    phase_category: tuple[tuple[str, str], ...] = ()
    explains: tuple[str, ...] = ()
    scope: str = "node"
    table: str | None = None
    priority: int = 50
    explanation: str = ""
    remediation: tuple[str, ...] = ()
    # steps the report may already have done: (step, condition), a condition of UNLESS (the step is left out then)
    remediation_unless: tuple[tuple[str, str], ...] = ()
    references: tuple[str, ...] = ()
    match: tuple[Sample, ...] = ()
    no_match: tuple[str, ...] = ()
    veto: str = "line"   # context: what it sets aside (its line; `after`: from the match to its event's end)
    after: tuple[str, ...] = ()  # a cause match that follows these categories on its node is their consequence
    recovery: Recovery | None = None  # the line saying the same device is back: a flap survived (decide)
    user_data: bool = False  # context: its line quotes user data (a logged prompt); it vetoes and is no finding
    # context: the root category it is the first statement of once a symptom of that category follows it (the
    # orchestrator marks a node dead; then the deployment's actor dies with it)
    states: str | None = None
    # cause: the server it happens to never listened, whatever start landmarks it printed before (the outcome is
    # never_ready: a port it could not bind is the last step of some versions' start)
    unready: bool = False
    # cause: a state of its node that holds until someone fixes it (a fabric manager that did not start): what of
    # its category fails on its node later, however much later, is it again (decide: not survived)
    persists: bool = False
    # cause: a state of its whole node, as its category's `node_wide` (a node's disk at its kubelet's threshold, where
    # the category also holds one pod's limits): the deployment working on the node after it survived it (decide)
    node_wide: bool = False
    # cause: a check made where the function of its stack's frame begins (init_device's free-memory check): that
    # frame's phase, whatever landmark the process printed within the steps the function runs ([frame_reach])
    at_frame: bool = False
    # a statement of a fault made once a controller has waited out its grace (Kubernetes' NodeNotReady after the
    # node's heartbeats stop): up to this many seconds after the fault, whose consequences may come first (decide)
    lags: float = 0.0
    location: SourceLocation = field(default=SourceLocation("<memory>"), compare=False)

    @property
    def fields(self) -> tuple[str, ...]:
        return named_groups(self.regex)

    def category_for_phase(self, phase: str | None) -> str:
        return dict(self.phase_category).get(phase or "", self.category)


@dataclass(frozen=True)
class Category:
    id: str
    group: str
    triage: int
    title: str
    quiet: bool = False  # a fault that crashes nothing: a failing check of it is the incident of a quiet bundle
    # a symptom every rank of a collective shows whichever rank failed (a watchdog timeout): a cause on any node
    # explains it
    collective: bool = False
    # a fault of the node's GPU stack (driver, GPU visibility, CUDA init): the deployment working on its node after
    # it, in any process, shows it was survived (it was another program's, or a retry's)
    node_wide: bool = False
    # the category holds only when nothing more specific is found: a cause on its node that explains it wins
    unspecific: bool = False


@dataclass(frozen=True)
class XidEntry:
    code: int
    name: str
    meaning: str
    blame: str
    severity: str
    action: str
    names_action: str | None = None  # a regex: its line names the recovery the driver asks for (group `action`)
    context_when: str | None = None  # a regex: a line whose detail it matches is context (a sub-code NVIDIA calls
    # non-fatal: monitored, not acted on)

    @property
    def role(self) -> str:
        return {"hardware": "cause", "driver": "cause", "consequence": "symptom"}.get(self.blame, "context")


@dataclass(frozen=True)
class Catalogue:
    signatures: tuple[Signature, ...]
    categories: dict[str, Category]
    xid: dict[int, XidEntry]
    dirs: tuple[Path, ...] = ()

    def by_id(self, sig_id: str) -> Signature:
        return next(s for s in self.signatures if s.id == sig_id)


# --------------------------------------------------------------------------------------------
# taxonomy and Xid table
# --------------------------------------------------------------------------------------------
def _load_categories(path: Path, issues: list[Issue]) -> dict[str, Category]:
    got = read_toml(path, issues)
    if not got:
        return {}
    data, text = got
    starts = table_starts(text, "category")
    out: dict[str, Category] = {}
    for i, d in enumerate(data.get("category", [])):
        loc = SourceLocation(str(path), starts[i] if i < len(starts) else None)
        try:
            cat = Category(id=str(d["id"]), group=str(d["group"]), triage=int(d["triage"]), title=str(d["title"]),
                           quiet=bool(d.get("quiet", False)), collective=bool(d.get("collective", False)),
                           node_wide=bool(d.get("node_wide", False)), unspecific=bool(d.get("unspecific", False)))
        except (KeyError, TypeError, ValueError) as e:
            issues.append(Issue("error", "category", f"category needs id, group, triage and title ({e})", loc))
            continue
        if cat.id in out:
            issues.append(Issue("error", "duplicate-category", f"category {cat.id!r} defined twice", loc))
        out[cat.id] = cat
    return out


def _load_xid(path: Path, issues: list[Issue]) -> dict[int, XidEntry]:
    if not path.exists():
        return {}
    got = read_toml(path, issues)
    if not got:
        return {}
    data, text = got
    starts = table_starts(text, "xid")
    out: dict[int, XidEntry] = {}
    for i, d in enumerate(data.get("xid", [])):
        loc = SourceLocation(str(path), starts[i] if i < len(starts) else None)
        try:
            e = XidEntry(code=int(d["code"]), name=str(d["name"]), meaning=str(d["meaning"]),
                         blame=str(d["blame"]), severity=str(d["severity"]), action=str(d["action"]),
                         names_action=d.get("names_action"), context_when=d.get("context_when"))
        except (KeyError, TypeError, ValueError) as err:
            issues.append(Issue("error", "xid", f"Xid entry needs code, name, meaning, blame, severity, action ({err})", loc))
            continue
        if e.blame not in XID_BLAMES:
            issues.append(Issue("error", "xid", f"Xid {e.code}: blame {e.blame!r} is not one of {XID_BLAMES}", loc))
        if e.severity not in SEVERITIES:
            issues.append(Issue("error", "xid", f"Xid {e.code}: severity {e.severity!r} is not one of {SEVERITIES}", loc))
        if e.code in out:
            issues.append(Issue("error", "xid", f"Xid {e.code} listed twice", loc))
        if e.names_action is not None and (regex_error(str(e.names_action)) or "(?P<action>" not in e.names_action):
            issues.append(Issue("error", "xid", f"Xid {e.code}: names_action is a regex with a group `action`", loc))
        if e.context_when is not None and regex_error(str(e.context_when)):
            issues.append(Issue("error", "xid", f"Xid {e.code}: context_when is a regex", loc))
        out[e.code] = e
    return out


# --------------------------------------------------------------------------------------------
# signatures
# --------------------------------------------------------------------------------------------
def _str_list(v, what: str, problems: list[str]) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        return (v,)
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return tuple(v)
    problems.append(f"{what} must be a list of strings")
    return ()


# what a report may have done already, so that a remediation step asking for it is left out
UNLESS = {
    "rank": "the report names the rank of the first cause",
    "xid_known": "the Xid table knows the code (its immediate action is the first step)",
}


def _steps(v, problems: list[str]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Remediation: strings, or {step, unless} tables (the step is left out when the report did it)."""
    if v is None:
        return (), ()
    steps, unless = [], []
    for x in ([v] if isinstance(v, str) else v if isinstance(v, list) else [None]):
        if isinstance(x, dict) and isinstance(x.get("step"), str) and x.get("unless") in UNLESS:
            steps.append(x["step"])
            unless.append((x["step"], x["unless"]))
        elif isinstance(x, str):
            steps.append(x)
        else:
            problems.append(f"remediation is a list of steps: strings, or {{ step, unless }} with unless one of "
                            f"{sorted(UNLESS)}")
            return (), ()
    return tuple(steps), tuple(unless)


def _samples(v, problems: list[str]) -> tuple[tuple[Sample, ...], tuple[str, ...]]:
    if not isinstance(v, dict):
        problems.append("samples must be a table with `match` and `no_match`")
        return (), ()
    unknown = set(v) - {"match", "no_match"}
    if unknown:
        problems.append(f"samples has unknown keys {sorted(unknown)}")
    matches: list[Sample] = []
    for item in v.get("match", []) or []:
        if isinstance(item, str):
            matches.append(Sample(item))
        elif isinstance(item, dict) and isinstance(item.get("line"), str):
            fields = item.get("fields", {}) or {}
            if not isinstance(fields, dict):
                problems.append("samples.match fields must be a table")
                fields = {}
            matches.append(Sample(item["line"], tuple(sorted((str(k), str(x)) for k, x in fields.items()))))
        else:
            problems.append("samples.match entries are strings or {line = ..., fields = {...}}")
    no_match = _str_list(v.get("no_match", []), "samples.no_match", problems)
    return tuple(matches), no_match


def signature_from_dict(d: dict, location: SourceLocation, text: str = "", end: int | None = None
                        ) -> tuple[Signature | None, list[Issue]]:
    """Build one Signature, or None with the issues that prevent it."""
    issues: list[Issue] = []

    def problem(msg: str, key: str | None = None, code: str = "schema", severity: str = "error") -> None:
        line = key_line(text, location.line, end, key) if (key and text and location.line) else location.line
        issues.append(Issue(severity, code, msg, SourceLocation(location.path, line)))

    sid = d.get("id", "?")
    for k in sorted(set(d) - SIGNATURE_KEYS):
        problem(f"signature {sid!r}: unknown key {k!r}", k)
    for k in REQUIRED_KEYS:
        if k not in d:
            problem(f"signature {sid!r}: missing required key {k!r}")
    if any(i.severity == "error" and "missing" in i.message for i in issues):
        return None, issues

    plist: list[str] = []
    prefilter = _str_list(d.get("prefilter"), "prefilter", plist)
    sources = _str_list(d.get("sources"), "sources", plist)
    phase = _str_list(d.get("phase"), "phase", plist)
    explains = _str_list(d.get("explains"), "explains", plist)
    remediation, remediation_unless = _steps(d.get("remediation"), plist)
    references = _str_list(d.get("references"), "references", plist)
    matches, no_match = _samples(d.get("samples"), plist)
    for p in plist:
        problem(f"signature {sid!r}: {p}")

    if not isinstance(sid, str) or not ID_RE.match(sid):
        problem(f"signature id {sid!r} must be lower-case kebab-case", "id")
    role = d.get("role")
    if role not in ROLES:
        problem(f"signature {sid!r}: role {role!r} is not one of {ROLES}", "role")
    scope = d.get("scope", "node")
    if scope not in SCOPES:
        problem(f"signature {sid!r}: scope {scope!r} is not one of {SCOPES}", "scope")
    if d.get("veto", "line") not in VETOES or ("veto" in d and role != "context"):
        problem(f"signature {sid!r}: veto is one of {VETOES}, for context signatures only", "veto")
    if not isinstance(d.get("user_data", False), bool) or (d.get("user_data") and role != "context"):
        problem(f"signature {sid!r}: user_data is true or false, for context signatures only", "user_data")
    if "states" in d and (role != "context" or not isinstance(d["states"], str)):
        problem(f"signature {sid!r}: states is a category, for context signatures only", "states")
    if not isinstance(d.get("unready", False), bool) or (d.get("unready") and role != "cause"):
        problem(f"signature {sid!r}: unready is true or false, for cause signatures only", "unready")
    for key in ("persists", "at_frame"):
        if not isinstance(d.get(key, False), bool) or (d.get(key) and role != "cause"):
            problem(f"signature {sid!r}: {key} is true or false, for cause signatures only", key)
    lags = d.get("lags", 0)
    if isinstance(lags, bool) or not isinstance(lags, (int, float)) or not 0 <= lags <= 3600 \
            or (lags and role != "cause"):
        problem(f"signature {sid!r}: lags is a number of seconds from 0 to 3600, for cause signatures only", "lags")
        lags = 0
    table = d.get("table")
    if table is not None and table not in TABLES:
        problem(f"signature {sid!r}: table {table!r} is not one of {TABLES}", "table")
    for ph in phase:
        if ph not in PHASES:
            problem(f"signature {sid!r}: phase {ph!r} is not one of {PHASES}", "phase")
    pc = d.get("phase_category", {}) or {}
    if not isinstance(pc, dict) or any(k not in PHASES for k in pc):
        problem(f"signature {sid!r}: phase_category keys must be phases {PHASES}", "phase_category")
        pc = {}
    if not prefilter:
        problem(f"signature {sid!r}: prefilter needs at least one literal", "prefilter")
    for lit in prefilter:
        if not lit.strip():
            problem(f"signature {sid!r}: empty prefilter literal", "prefilter")
        if FORBIDDEN_PREFILTER_CHARS & set(lit):
            problem(f"signature {sid!r}: prefilter {lit!r} contains a character that container JSON escapes "
                    f"(one of \" \\ < > &)", "prefilter")
    regex = d.get("regex")
    if not isinstance(regex, str) or not regex:
        problem(f"signature {sid!r}: regex must be a non-empty string", "regex")
        regex = ""
    else:
        err = regex_error(regex)
        if err:
            problem(f"signature {sid!r}: regex does not compile in the Rust engine: {err}", "regex", "regex")
    recovery = _recovery(d.get("recovery"), regex, lambda msg: problem(f"signature {sid!r}: recovery {msg}",
                                                                          "recovery"))
    if role == "cause":
        if not d.get("explanation"):
            problem(f"signature {sid!r}: a cause needs an explanation", "explanation")
        if not remediation and table is None:
            problem(f"signature {sid!r}: a cause needs remediation steps", "remediation")
    if not matches:
        problem(f"signature {sid!r}: needs at least one samples.match line", "samples")
    for s in matches:
        if prefilter and not holds_literal(prefilter, s.line, regex.startswith("(?i)")):
            problem(f"signature {sid!r}: sample {s.line[:80]!r} contains none of the prefilter literals",
                    "samples", "prefilter-coverage")
    try:
        priority = int(d.get("priority", 50))
    except (TypeError, ValueError):
        problem(f"signature {sid!r}: priority must be an integer", "priority")
        priority = 50
    if any(i.severity == "error" for i in issues):
        return None, issues
    sig = Signature(
        id=sid, category=str(d["category"]), title=str(d["title"]), role=role, prefilter=prefilter, regex=regex,
        sources=sources, phase=phase, phase_category=tuple(sorted((str(k), str(v)) for k, v in pc.items())),
        explains=explains, scope=scope, table=table, priority=priority,
        explanation=str(d.get("explanation", "")).strip(), remediation=remediation,
        remediation_unless=remediation_unless, references=references,
        match=matches, no_match=no_match, veto=str(d.get("veto", "line")),
        after=tuple(_str_list(d.get("after"), "after", plist)), recovery=recovery,
        user_data=d.get("user_data") is True, states=d.get("states"), unready=d.get("unready") is True,
        persists=d.get("persists") is True, node_wide=d.get("node_wide") is True, at_frame=d.get("at_frame") is True,
        lags=float(lags), location=location,
    )
    return sig, issues


def _recovery(d, regex: str, problem) -> Recovery | None:
    """A signature's `recovery` table: {prefilter, regex, samples}, its regex naming a field of the
    signature's own (the device that came back is the one that failed)."""
    if d is None:
        return None
    if not isinstance(d, dict) or not isinstance(d.get("regex"), str) or not d.get("prefilter"):
        problem("is a table with prefilter, regex and samples")
        return None
    rec = Recovery(tuple(map(str, d["prefilter"])), d["regex"], tuple(map(str, d.get("samples", []))))
    if (err := regex_error(rec.regex)):
        problem(f"regex does not compile in the Rust engine: {err}")
        return None
    if not set(rec.fields) & set(named_groups(regex)):
        problem("names none of the regex's fields (which device came back?)")
        return None
    if not rec.samples:
        problem("needs at least one sample")
    for line in rec.samples:
        if not rec.prefilter_in(line) or not re.search(rec.regex, line):
            problem(f"sample {line[:80]!r} does not match")
    return rec


def _load_signature_file(path: Path, issues: list[Issue]) -> list[Signature]:
    got = read_toml(path, issues)
    if not got:
        return []
    data, text = got
    for k in sorted(set(data) - {"signature"}):
        issues.append(Issue("error", "schema", f"unknown top-level key {k!r} (expected [[signature]] tables)",
                            SourceLocation(str(path), key_line(text, 1, None, k))))
    starts = table_starts(text, "signature")
    out = []
    for i, d in enumerate(data.get("signature", [])):
        start = starts[i] if i < len(starts) else None
        end = starts[i + 1] if i + 1 < len(starts) else None
        sig, found = signature_from_dict(d, SourceLocation(str(path), start), text, end)
        issues.extend(found)
        if sig:
            out.append(sig)
    return out
