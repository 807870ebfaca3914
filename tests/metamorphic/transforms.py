"""Transforms of a corpus bundle that must leave its diagnosis as it was (issue #21). Each one reads a case's
bundle folder, writes a changed copy under a target folder (deterministic for a seed) and returns a Mapping
that carries the case's truth over: file renames, lines inserted per file, host renames (ranks never change).

A transform that does not apply to a case (one node only, nothing to rewrap, ...) raises NotApplicable.
What a transform needs to know about a case (its hosts, which node each file belongs to, the kinds of its
files) is its Profile, built from the bundle, its truth and the original report."""
from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import random
import re
import shutil
import tarfile
import tomllib
import zipfile
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from typing import Callable

import zstandard

from k3logs.catalogue.witnesses import expand_nodelist
from k3logs.evaluate.score import listed

from . import lines as L
from . import timefmt

HERE = Path(__file__).resolve().parent


class NotApplicable(Exception):
    """The transform has nothing to change in this case (the reason says why)."""


# ------------------------------------------------------------------------------------------------------
# bundle members: text in, text out (single compressed files stay compressed, archives are left whole)
# ------------------------------------------------------------------------------------------------------
COMPRESSORS: dict[str, tuple[bytes, Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    ".gz": (b"\x1f\x8b", gzip.decompress, lambda b: gzip.compress(b, mtime=0)),
    ".bz2": (b"BZh", bz2.decompress, bz2.compress),
    ".xz": (b"\xfd7zXZ\x00", lzma.decompress, lzma.compress),
    ".zst": (b"\x28\xb5\x2f\xfd", lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b),
             lambda b: zstandard.ZstdCompressor().compress(b)),
}
ARCHIVE_NAME = re.compile(r"\.(?:tar(?:\.(?:gz|zst|bz2|xz))?|tgz|tzst|zip)$", re.I)


def _compression(data: bytes) -> str:
    return next((ext for ext, (magic, _, _) in COMPRESSORS.items() if data.startswith(magic)), "")


def is_archive(raw: bytes) -> bool:
    return raw.startswith(b"PK\x03\x04") or raw[257:262] == b"ustar"


@dataclass
class Text:
    """A member's text as lines (the last element '' when it ends in a newline), and how to write it back."""

    lines: list[str]
    compression: str = ""
    encoding: str = "utf-8"
    bom: bytes = b""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def encode(self) -> bytes:
        raw = self.bom + self.text.encode(self.encoding, "surrogateescape" if self.encoding == "utf-8" else "strict")
        return COMPRESSORS[self.compression][2](raw) if self.compression else raw


def read_text(path: Path) -> Text | None:
    """The member's text, or None for an archive or binary data (left as it is)."""
    data = path.read_bytes()
    comp = _compression(data)
    raw = COMPRESSORS[comp][1](data) if comp else data
    if is_archive(raw):
        return None
    for bom, enc in ((b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if raw.startswith(bom):
            return Text(raw[len(bom):].decode(enc).split("\n"), comp, enc, bom)
    if b"\x00" in raw[:4096]:
        return None
    return Text(raw.decode("utf-8", "surrogateescape").split("\n"), comp)


def files_of(bundle: Path) -> list[str]:
    return sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file() and not p.is_symlink())


# ------------------------------------------------------------------------------------------------------
# the mapping a transform returns
# ------------------------------------------------------------------------------------------------------
@dataclass
class Mapping:
    """How the truth of a case reads in its variant."""

    path: Path                                                   # what to analyse: a folder or an archive
    files: dict[str, str] = field(default_factory=dict)          # file as reported -> file in the variant
    inserted: dict[str, list[int]] = field(default_factory=dict)  # file -> original line numbers after which
    hosts: dict[str, str] = field(default_factory=dict)          # one line was inserted (repeated for more)
    expect: dict = field(default_factory=dict)                   # truth keys the variant sets (outcome, ...)
    note: str = ""                                               # what was done, for failure messages

    def file(self, f: str) -> str:
        return self.files.get(f, f)

    def line(self, f: str, n: int) -> int:
        return n + bisect_left(sorted(self.inserted.get(f, [])), n)

    def node(self, n: str | None) -> str | None:
        """A node as the variant names it (a fully qualified name with its first label, the host, renamed)."""
        if not n or n in self.hosts:
            return self.hosts.get(n, n) if n else n
        first, dot, rest = n.partition(".")
        return self.hosts[first] + dot + rest if dot and first in self.hosts else n

    def _renamed(self, name: str) -> str:
        """A host, a file path or a file's own name, as the variant spells it."""
        for orig, new in self.files.items():
            if orig == name:
                return new
            if orig.rsplit("/", 1)[-1] == name:
                return new.rsplit("/", 1)[-1]
        return self.node(name)

    def truth(self, truth: dict) -> dict:
        """The case's truth as it reads in the variant (spot checks of the event table are left out)."""
        t = json.loads(json.dumps(truth))
        t.pop("attribution", None)
        fc = t.get("first_causal")
        if fc:
            orig = fc["file"]
            fc["line"] = self.line(orig, fc["line"])
            fc["file"] = self.file(orig)
            alts = []
            for alt in listed(fc.get("line_alt")):
                if isinstance(alt, dict):
                    f = alt.get("file", orig)
                    alts.append({**alt, "file": self.file(f), "line": self.line(f, alt["line"])})
                else:
                    alts.append({"file": self.file(orig), "line": self.line(orig, alt)})
            if alts:
                fc["line_alt"] = alts
        if t.get("origin"):
            t["origin"]["node"] = self.node(t["origin"].get("node"))
        if t.get("evidence_missing"):   # (a missing node's or a cut file's name is renamed with the others)
            t["evidence_missing"] = [self._renamed(m) for m in t["evidence_missing"]]
        if "outcome" in self.expect:   # (the case's alternatives are for the case's own outcome)
            t.pop("outcome_alt", None)
        t.update(self.expect)
        return t


# ------------------------------------------------------------------------------------------------------
# what a transform knows about a case
# ------------------------------------------------------------------------------------------------------
HOST = re.compile(r"^[A-Za-z][A-Za-z0-9-]*$")
NOT_HOSTS = {"localhost", "kernel", "docker", "default", "master", "worker", "unknown", "none", "null"}
NCCL_HOST = re.compile(r"(?<![\w.-])([A-Za-z][\w-]*)(?:\.[\w.-]+)?:\d+:\d+ (?:\[\d+\] )?(?:\S+:\d+ (?:\(\w+\) )?)?NCCL ")
HOST_NOTE = re.compile(r"^\s*(?:host|hostname|node|NodeName|BatchHost)\s*[:=]\s*([A-Za-z][\w-]*)(?:\.[\w.-]+)?\s*$",
                       re.M | re.I)
NODELIST = re.compile(r"\b(?:NodeList|BatchHost|Node)=([A-Za-z][\w-]*\d)\b")
COMPRESSED = re.compile(r"(?<![\w-])[A-Za-z][\w-]*\[\d+(?:[,-]\d+)+\]")   # Slurm's gpu-[07-08], gpu[1,3]
POD_DIR = re.compile(r"^([a-z0-9][a-z0-9-]*)_([a-z0-9][a-z0-9.-]*)_([0-9a-f]{8}-[0-9a-f-]{27})$")
POD_REF = re.compile(r"(?:\bpod/|\[pod/)([a-z0-9][a-z0-9.-]*[a-z0-9])")
DESCRIBE_NAME = re.compile(r"^Name:\s+([a-z0-9][a-z0-9.-]*)\s*$", re.M)
IPV4 = re.compile(r"(?<![\w.=-])((?:\d{1,3})(?:\.\d{1,3}){3})(?![\w-]|\.\d)")
CID = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
TABLE_HEAD = re.compile(r"^(?:NAMESPACE\s+)?NAME\s+(?:READY\s+STATUS|STATUS\s+ROLES)")


def _looks_like_host(h: str) -> bool:
    return bool(HOST.match(h)) and len(h) >= 4 and h.lower() not in NOT_HOSTS and (
        any(c.isdigit() for c in h) or "-" in h)


def _kubectl_tables(lines: list[str]) -> list[dict[str, str]]:
    """Rows of `kubectl get pods|nodes` tables (by column offsets, so a RESTARTS like '3 (12m ago)' is one cell)."""
    rows, cols = [], None
    for ln in lines:
        if TABLE_HEAD.match(ln):
            cols = [(m.group(0), m.start()) for m in re.finditer(r"\S+(?: (?=NODE|GATES)\S+)?", ln)]
            continue
        if cols is None:
            continue
        if not ln.strip() or ln.startswith(("$", "#")):
            cols = None
            continue
        row = {}
        for i, (name, start) in enumerate(cols):
            end = cols[i + 1][1] if i + 1 < len(cols) else None
            row[name] = ln[start:end].split()[0] if ln[start:end].split() else ""
        rows.append(row)
    return rows


@dataclass
class Profile:
    case: str
    bundle: Path
    truth: dict
    files: list[str]
    kinds: dict[str, str]            # file -> kind sniffed by k3logs
    wrapped: dict[str, bool]         # file -> sniffed inside a container/journal wrapper
    file_node: dict[str, str | None]
    nodes: list[str]                 # nodes the original report names
    offsets: dict[str, float]        # node -> its clock minus the reference node's, as the original corrected it
    node_dirs: dict[str, str]        # top folder -> the one node all its attributed files are on
    hosts: list[str]
    pods: list[str]
    ips: list[str]
    cids: list[str]
    year: int
    archives: list[str]              # members that are archives or binary (never rewritten)
    rank_by_task: bool = False       # the original report's rank came from the task a kernel line names

    def text(self, f: str) -> Text | None:
        return read_text(self.bundle / f)


def profile(case_dir: Path, report, truth: dict | None = None) -> Profile:
    """What the transforms need to know about a case, from its bundle, its truth and the original report."""
    bundle = case_dir / "bundle"
    if not bundle.is_dir():
        raise NotApplicable("the case's bundle is not a folder")
    truth = truth if truth is not None else json.loads((case_dir / "truth.json").read_text(encoding="utf-8"))
    files = files_of(bundle)
    kinds = {e.file: e.kind for e in report.sniffed}
    wrapped = {e.file: "wrapper" in e.reason for e in report.sniffed}
    file_node = {e.file: e.node for e in report.sniffed}
    nodes = sorted(n.node for n in report.nodes if n.node)
    # the offsets the original analysis applied (estimates below the tolerance were not: they stay 0 here)
    offsets = {n.node: (n.clock_offset_s or 0.0) if n.clock_offset_applied else 0.0 for n in report.nodes if n.node}
    by_dir: dict[str, set] = {}
    for f in files:
        if "/" in f:
            by_dir.setdefault(f.split("/", 1)[0], set()).add(file_node.get(f))
    node_dirs = {d: next(iter(ns - {None})) for d, ns in by_dir.items() if len(ns - {None}) == 1}
    if len(set(node_dirs.values())) != len(node_dirs):   # two folders of one node: not per-node folders
        node_dirs = {}
    texts, archives = {}, []
    for f in files:
        t = read_text(bundle / f)
        if t is None:
            archives.append(f)
        else:
            texts[f] = t.text
    hosts = set(nodes) | {(truth.get("origin") or {}).get("node") or ""}   # (no origin: healthy or inconclusive)
    hosts |= {a.get("node") or "" for a in truth.get("attribution", []) or []}
    pods, ips, cids = set(), set(), set()
    for f, text in texts.items():
        hosts |= set(NCCL_HOST.findall(text)) | set(HOST_NOTE.findall(text)) | set(NODELIST.findall(text))
        hosts |= {h for m in COMPRESSED.finditer(text) for h in expand_nodelist(m.group(0))}
        lines = text.split("\n")
        for w in L.wrappers_of(lines) & {"journald", "journald_iso"}:
            rx = dict(L.TEXT_WRAPPERS)[w]
            hosts |= {m.group("host") for ln in lines if (m := rx.match(ln))}
        for row in _kubectl_tables(lines):
            hosts.add(row.get("NODE", ""))
            (pods if "READY" in row else hosts).add(row.get("NAME", ""))
        pods |= set(POD_REF.findall(text))
        if "\nNamespace:" in text and "\nNode:" in text:
            pods |= set(DESCRIBE_NAME.findall(text)[:1])
        ips |= {ip for ip in IPV4.findall(text) if _renamable_ip(ip)}
        cids |= {m.group(0) for m in CID.finditer(text) if text[max(0, m.start() - 7):m.start()] != "sha256:"}
    for f in files:
        for part in PurePosixPath(f).parts:
            if (m := POD_DIR.match(part)):
                pods.add(m.group(2))
            cids |= set(CID.findall(part))
    hosts = sorted(h for h in hosts if h and _looks_like_host(h))
    pods = sorted(p for p in pods if p and p not in hosts and "-" in p and len(p) >= 5 and HOST.match(p))
    year = timefmt.year_of(texts.values()) or datetime.now(timezone.utc).year
    by_task = (report.origin.rank_from or "").startswith("the kernel names task") if report.origin else False
    return Profile(case_dir.name, bundle, truth, files, kinds, wrapped, file_node, nodes, offsets, node_dirs,
                   hosts, pods, sorted(ips), sorted(cids), year, archives, by_task)


def _octet(o: str, rng: random.Random) -> str:
    """A random octet with as many digits as `o`."""
    return str({1: rng.randint(0, 9), 2: rng.randint(10, 99), 3: rng.randint(100, 254)}[len(o)])


def _renamable_ip(ip: str) -> bool:
    o = [int(x) for x in ip.split(".")]
    if any(x > 255 for x in o) or o[0] in (0, 127, 255) or o[0] >= 224:
        return False
    return not (o[0] == 169 and o[1] == 254) and not (o[0] == 172 and o[1] == 17)  # link-local, docker0


# ------------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------------
def _fresh(dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    return dst


def _copy(prof: Profile, out: Path) -> Path:
    shutil.copytree(prof.bundle, out)
    return out


def _rewrite_all(prof: Profile, out: Path, fn: Callable[[str, Text], Text | None]) -> None:
    """Copy the bundle to `out`, each text member through fn(file, text) (None: unchanged)."""
    for f in prof.files:
        target = out / f
        target.parent.mkdir(parents=True, exist_ok=True)
        t = read_text(prof.bundle / f)
        new = fn(f, t) if t is not None else None
        if new is None:
            shutil.copy2(prof.bundle / f, target)
        else:
            target.write_bytes(new.encode())


def _sub_tokens(tokens: dict[str, str], boundary: str) -> Callable[[str], str]:
    """One pass replacing every token (longest first) not touching a `boundary` character on either side."""
    if not tokens:
        return lambda s: s
    rx = re.compile(rf"(?<!{boundary})(?:{'|'.join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))})"
                    rf"(?!{boundary})")
    return lambda s: rx.sub(lambda m: tokens[m.group(0)], s)


def _clocks(prof: Profile) -> tuple[datetime | None, datetime | None, bool]:
    """(earliest, latest) wall-clock time in the bundle and whether any of them carries a year."""
    lo = hi = None
    yearful = False
    for f in prof.files:
        t = prof.text(f)
        if t is None:
            continue
        for shape, _, when in timefmt.times(t.text, prof.year):
            if when is None or shape == "compact":
                continue
            yearful |= shape not in timefmt.YEARLESS
            lo = when if lo is None or when < lo else lo
            hi = when if hi is None or when > hi else hi
    return lo, hi, yearful


# ------------------------------------------------------------------------------------------------------
# names: hosts, pods, IPs, container ids; pids; file names
# ------------------------------------------------------------------------------------------------------
def _same_shape(token: str, rng: random.Random) -> str:
    """A random token of the same shape (letters for letters, digits for digits, case and '-' kept)."""
    return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz") if c.islower() else
                   rng.choice("ABCDEFGHJKMNPQRSTUVWXYZ") if c.isupper() else
                   rng.choice("0123456789") if c.isdigit() else c for c in token)


def rename_hosts(prof: Profile, out: Path, seed: int) -> Mapping:
    """Hosts, pods, IPs and container ids renamed consistently, in every file and in the paths. New names have
    the shape of the old ones (each '-' part renamed the same way everywhere, lengths kept: kubectl and
    nvidia-smi tables stay aligned); a pod's ordinals (digit-only parts) are kept."""
    rng = random.Random(seed)
    if not (prof.hosts or prof.pods or prof.ips or prof.cids):
        raise NotApplicable("no host, pod, IP or container id to rename")
    if prof.archives:
        raise NotApplicable("holds archives, whose contents would keep the old names")
    everything = "\n".join(t.text for f in prof.files if (t := prof.text(f))) + "\n".join(prof.files)
    parts: dict[str, str] = {}

    def part(p: str, keep_digits: bool) -> str:
        if keep_digits and p.isdigit():
            return p
        # (a new part should not occur in the bundle already; a short number always does somewhere in a big
        # journal, so after a hundred draws any unused one will do)
        for tries in range(10_000):
            if p in parts:
                break
            new = _same_shape(p, rng)
            if new not in parts.values() and (tries >= 100 or len(new) <= 2 or new not in everything):
                parts[p] = new
        else:
            raise NotApplicable(f"no fresh name of the shape of {p!r}")
        return parts[p]

    names = {}
    for h in prof.hosts:
        names[h] = "-".join(part(p, False) for p in h.split("-"))
    for p in prof.pods:
        names[p] = "-".join(part(x, True) for x in p.split("-"))
    if len(set(names.values())) != len(names):
        raise NotApplicable("two names would become one")   # (not seen; a guard)
    hosts = {h: names[h] for h in prof.hosts}
    nets: dict[tuple, tuple] = {}
    ips = {}
    for ip in prof.ips:
        o = ip.split(".")
        key = tuple(o[:3])
        if key not in nets:
            while True:
                b = o[1] if o[:2] == ["192", "168"] else (str(rng.randint(16, 31)) if o[0] == "172" else
                                                         _octet(o[1], rng))
                new = (o[0], b, _octet(o[2], rng))
                if new not in nets.values() and new != key:
                    break
            nets[key] = new
        ips[ip] = ".".join(nets[key] + (o[3],))
    cids = {}
    for c in prof.cids:
        new = f"{rng.getrandbits(256):064x}"
        cids[c], cids[c[:12]] = new, new[:12]
    pods = {p: names[p] for p in prof.pods}
    sub_hex = _sub_tokens(cids, "[0-9a-f]")
    sub_ip = _sub_tokens(ips, r"[\d.]")
    sub_name = _sub_tokens(names, "[A-Za-z0-9]")

    def rename(s: str) -> str:
        # (a compressed node list of renamed hosts cannot stay compressed: it is written out, as Slurm accepts)
        s = COMPRESSED.sub(lambda m: ",".join(names.get(h, h) for h in expand_nodelist(m.group(0))), s)
        return sub_name(sub_ip(sub_hex(s)))

    out = _fresh(out)
    files = {}
    for f in prof.files:
        new = "/".join(rename(part) for part in f.split("/"))
        files[f] = new
        t = read_text(prof.bundle / f)
        (out / new).parent.mkdir(parents=True, exist_ok=True)
        if t is None:
            shutil.copy2(prof.bundle / f, out / new)
        else:
            t.lines = rename(t.text).split("\n")
            (out / new).write_bytes(t.encode())
    return Mapping(out, files=files, hosts=hosts, note=f"{len(hosts)} hosts, {len(pods)} pods, {len(ips)} IPs, "
                   f"{len(prof.cids)} container ids renamed")


PID_CONTEXTS = [
    re.compile(r"\bpid=(\d+)"),
    re.compile(r"\b(?:pid|PID|Pid)(?::\s*|\s+)(\d+)\b"),
    re.compile(r'"Pid"\s*:\s*(\d+)'),
    re.compile(r"(?<![\w.-])[A-Za-z][\w.-]*:(\d+):(\d+) (?=(?:\[\d+\] )?(?:\S+:\d+ (?:\(\w+\) )?)?NCCL )"),
    re.compile(r"(?<=[\w)-])\[(\d+)\]: "),                                   # journald ident[pid]:, comm[pid]:
    re.compile(r"(?<![A-Za-z0-9])[DIWEFC]\d{4} \d\d:\d\d:\d\d\.\d{6} +(\d+) "),  # glog
    re.compile(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [DIWEF] (\d+) (\d+)\]"),  # ray C++
    re.compile(r"\b(?:server process|[Kk]illed process|[Ss]ending process|[Kk]illing process) \[?(\d+)\]?"),
    re.compile(r"^\|\s+\d+\s+(?:N/A|\d+)\s+(?:N/A|\d+)\s+(\d+)\s+[CGM+]+\s", re.M),  # nvidia-smi processes
    re.compile(r"[└├]─(\d+) "),                                              # systemctl status tree
]
PS_HEAD = re.compile(r"^\s*(?:USER|UID)\s+PID\s+")


def renumber_pids(prof: Profile, out: Path, seed: int) -> Mapping:
    """Every process id moved by one offset (so pids that are equal stay equal), in every context a pid is
    printed in, and in NCCL_DEBUG_FILE names."""
    rng = random.Random(seed)
    off = rng.randint(2000, 60000)
    if prof.archives:
        raise NotApplicable("holds archives, whose contents would keep the old pids")

    def bump(text: str) -> str:
        spans = {}
        for rx in PID_CONTEXTS:   # spans first, one rewrite after: a pid two contexts match moves once
            for m in rx.finditer(text):
                for i in range(1, len(m.groups()) + 1):
                    if m.span(i)[0] >= 0:
                        spans[m.span(i)] = m.group(i)
        out_, pos = [], 0
        for (a, b), v in sorted(spans.items()):
            if a < pos:
                continue
            out_ += [text[pos:a], v if int(v) == 0 else str(int(v) + off)]
            pos = b
        return "".join(out_) + text[pos:]

    def fix_ps(lines: list[str]) -> list[str]:
        col = None
        for i, ln in enumerate(lines):
            if PS_HEAD.match(ln):
                col = 1
                continue
            if col is not None and ln.strip():
                cells = re.match(r"^(\s*\S+\s+)(\d+)(.*)$", ln)
                lines[i] = f"{cells.group(1)}{int(cells.group(2)) + off}{cells.group(3)}" if cells else ln
            else:
                col = None
        return lines

    changed = [0]

    def fn(f: str, t: Text) -> Text:
        t.lines = fix_ps(bump(t.text).split("\n"))
        changed[0] += t.text != read_text(prof.bundle / f).text
        return t

    out = _fresh(out)
    files = {}
    for f in prof.files:
        name = re.sub(r"^(nccl\..+\.)(\d+)(\.\w+)$", lambda m: f"{m.group(1)}{int(m.group(2)) + off}{m.group(3)}",
                      PurePosixPath(f).name)
        files[f] = str(PurePosixPath(f).with_name(name))
    tmp = out / ".orig-names"
    _rewrite_all(prof, tmp, fn)
    if not changed[0]:
        raise NotApplicable("no pid in the bundle")
    for f, new in files.items():
        (out / new).parent.mkdir(parents=True, exist_ok=True)
        (tmp / f).rename(out / new)
    shutil.rmtree(tmp)
    return Mapping(out, files=files, note=f"pids + {off}")


KEEP_EXT = re.compile(r"(?:\.tar)?\.(?:gz|zst|bz2|xz)$|\.(?:tgz|tzst|tar|zip)$", re.I)
RANK_TOKEN = re.compile(r"rank[-_]?\d+", re.I)


def rename_files(prof: Profile, out: Path, seed: int) -> Mapping:
    """Every file renamed (folders kept): names are arbitrary, sniffing decides. Kept from the old name: the
    compression suffix, and the hosts, pods, container ids and 'rankN' it held (those are witnesses)."""
    rng = random.Random(seed)
    words = ["capture", "part", "dump", "out", "x", "notes", "f", "blob", "item", "copy"]
    tokens = sorted(set(prof.hosts) | set(prof.pods) | set(prof.cids), key=len, reverse=True)
    out = _fresh(out)
    files, taken = {}, set()
    order = list(prof.files)
    rng.shuffle(order)
    for i, f in enumerate(order):
        p = PurePosixPath(f)
        kept = []
        rest = p.name
        for tok in tokens:
            if re.search(rf"(?<![A-Za-z0-9]){re.escape(tok)}(?![A-Za-z0-9])", rest):
                kept.append(tok)
                rest = rest.replace(tok, "")
        kept += RANK_TOKEN.findall(rest)
        ext = m.group(0) if (m := KEEP_EXT.search(p.name)) else rng.choice(["", ".log", ".txt", ".out", ".dat"])
        name = f"{rng.choice(words)}{i:03d}" + "".join(f"-{k}" for k in kept) + ext
        new = str(p.with_name(name))
        assert new not in taken
        taken.add(new)
        files[f] = new
        (out / new).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(prof.bundle / f, out / new)
    return Mapping(out, files=files, note="every file renamed, in a new order")


# ------------------------------------------------------------------------------------------------------
# clocks
# ------------------------------------------------------------------------------------------------------
def shift_clock(prof: Profile, out: Path, seed: int) -> Mapping:
    """Every clock of every node moved by one offset (days and seconds), in every time format; kernel
    seconds since boot stay (the boot time moves with the clock)."""
    rng = random.Random(seed)
    if prof.archives:
        raise NotApplicable("holds archives, whose times would not move")
    lo, hi, yearful = _clocks(prof)
    if lo is None:
        raise NotApplicable("no time in the bundle")
    now = datetime.now()
    for _ in range(100):
        delta = rng.choice([-1, 1]) * rng.randint(3 * 86400, 300 * 86400) + rng.randint(0, 86399)
        a, b = lo + timedelta(seconds=delta), hi + timedelta(seconds=delta)
        # with no year anywhere, a bundle across New Year or in the future is ambiguous to anyone
        if yearful or (a.year == b.year and b.replace(year=now.year) < now):
            break
    out = _fresh(out)
    files = {f: "/".join(timefmt.SHAPES.sub(lambda m: timefmt._shift_one(m, delta, prof.year, False)
                                            if m.lastgroup == "compact" else m.group(0), part)
                         for part in f.split("/")) for f in prof.files}

    def fn(f: str, t: Text) -> Text:
        t.lines = timefmt.shift(t.text, delta, prof.year).split("\n")
        return t
    tmp = out / ".orig-names"
    _rewrite_all(prof, tmp, fn)
    for f, new in files.items():
        (out / new).parent.mkdir(parents=True, exist_ok=True)
        (tmp / f).rename(out / new)
    shutil.rmtree(tmp)
    return Mapping(out, files=files, note=f"clocks {'+' if delta >= 0 else '-'}{timedelta(seconds=abs(delta))}")


DATE_READING = re.compile(r"^(?P<host>[A-Za-z][\w.-]*): \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\s*$")


# a `date` printed alone in a transcript (ssh HOST 'hostname; date -u ...'): the line cannot say whose clock it read
BARE_READING = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?$")


def _readings(prof: Profile) -> bool:
    for f in prof.files:
        t = prof.text(f)
        if t and len({m.group("host") for ln in t.lines if (m := DATE_READING.match(ln.strip()))}) >= 2:
            return True
    return False


DATE_COMMAND = re.compile(r"\bdate(?: -u\b| \+|;|'|$)", re.M)   # (the command that printed them)
SRUN_TASK = re.compile(r"^\s*(\d+): ")


def _unmovable(prof: Profile) -> str | None:
    """Why one node's lines cannot all move with its clock, if they cannot: bare `date` lines of a transcript (they
    would measure the node's old offset) or an `srun -l` output holding the tasks of several nodes (its task numbers
    do not say which node's they are); either way the variant would contradict itself."""
    for f in prof.files:
        if not (t := prof.text(f)):
            continue
        if sum(bool(BARE_READING.match(ln.strip())) for ln in t.lines) >= 2 and DATE_COMMAND.search(t.text):
            return f"{f} holds clock readings of a transcript, which would not move with the node"
        if len({m.group(1) for ln in t.lines if (m := SRUN_TASK.match(ln))}) >= 2:
            return f"{f} holds the tasks of several nodes (srun -l), which would not move with the node"
    return None


def _skew(prof: Profile, out: Path, seed: int, beyond: bool) -> Mapping:
    rng = random.Random(seed)
    if len(prof.node_dirs) < 2:
        raise NotApplicable("not one folder per node")
    if prof.archives:
        raise NotApplicable("holds archives, whose times would not move")
    if (why := _unmovable(prof)) is not None:
        raise NotApplicable(why)
    folder = rng.choice(sorted(prof.node_dirs))
    node = prof.node_dirs[folder]
    delta = rng.choice([-1, 1]) * (rng.randint(8, 120) if beyond else 1)
    host_line = re.compile(rf"^(?:{re.escape(node)}(?:\.[\w.-]+)?: |(?:\w{{3}} [ \d]\d \d\d:\d\d:\d\d\S*|"
                           rf"\d{{4}}-\d\d-\d\dT\S+) {re.escape(node)} |{re.escape(node)}:\d+:\d+ )")

    def fn(f: str, t: Text) -> Text:
        if f.startswith(folder + "/"):
            t.lines = timefmt.shift(t.text, delta, prof.year).split("\n")
        else:   # a shared file: only the lines this node wrote (pdsh 'host: ', journald and NCCL host fields)
            t.lines = [timefmt.shift(ln, delta, prof.year) if host_line.match(ln) else ln for ln in t.lines]
        return t
    out = _fresh(out)
    _rewrite_all(prof, out, fn)
    note = f"{node}'s clock {delta:+d} s"
    if beyond and not _readings(prof):
        _, hi, _ = _clocks(prof)
        at = hi + timedelta(minutes=rng.randint(5, 40))
        name = f"clock-readings-{rng.randint(100, 999)}.txt"
        rows = [f"# pdsh -w {','.join(prof.nodes)} 'date -u +%FT%T.%N'   (taken after the incident, all at once)"]
        for n in prof.nodes:
            t = at + timedelta(seconds=prof.offsets.get(n, 0.0) + (delta if n == node else 0),
                               microseconds=rng.randint(0, 20_000))   # (pdsh: a few ms apart)
            rows.append(f"{n}: {t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}{rng.randint(0, 999):03d}")
        (out / name).write_text("\n".join(rows) + "\n", encoding="utf-8")
        note += f", date readings added in {name}"
    return Mapping(out, note=note)


def skew_within(prof: Profile, out: Path, seed: int) -> Mapping:
    """One node's clock 1 s off (within the default --skew-tolerance of 2 s)."""
    return _skew(prof, out, seed, beyond=False)


def skew_beyond(prof: Profile, out: Path, seed: int) -> Mapping:
    """One node's clock 8 to 120 s off, and simultaneous `date` readings in the bundle that show it."""
    return _skew(prof, out, seed, beyond=True)


# ------------------------------------------------------------------------------------------------------
# wrappers
# ------------------------------------------------------------------------------------------------------
def _journal_pid(lines: list[str], rng: random.Random) -> int:
    """The pid journald records: the server's own when the log shows a host pid, else a host pid of its own
    (a container's pid 1 is not what the host's journal sees)."""
    text = "\n".join(lines[:400])
    m = re.search(r"\(APIServer pid=(\d+)\)|Started server process \[(\d+)\]|\bpid=(\d+)", text)
    pid = int(next(g for g in m.groups() if g)) if m else 0
    return pid if pid >= 300 else rng.randint(2000, 90000)


def _journald_json(t: datetime, host: str, pid: int, boot: str, seq: int, line: str) -> str:
    usec = int(t.replace(tzinfo=timezone.utc).timestamp() * 1_000_000)
    printable = all(c >= " " or c == "\t" for c in line)
    msg = line if printable else list(line.encode("utf-8", "surrogateescape"))   # journalctl's byte array
    rec = {"__CURSOR": f"s={boot};i={seq:x};b={boot};m={seq:x};t={usec:x};x={seq:016x}",
           "__REALTIME_TIMESTAMP": str(usec), "__MONOTONIC_TIMESTAMP": str(3_600_000_000 + seq * 1000),
           "_BOOT_ID": boot, "PRIORITY": "6", "SYSLOG_FACILITY": "3", "_UID": "0", "_GID": "0",
           "_HOSTNAME": host, "_TRANSPORT": "stdout", "SYSLOG_IDENTIFIER": "vllm", "_PID": str(pid),
           "_COMM": "python3", "_SYSTEMD_UNIT": "vllm.service", "MESSAGE": msg}
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))


WRAPPERS: dict[str, Callable[..., str]] = {
    "docker": lambda t, ns, line, **k: L.docker_json(line, "stdout", f"{t:%Y-%m-%dT%H:%M:%S}.{ns:09d}Z"),
    "cri": lambda t, ns, line, **k: f"{t:%Y-%m-%dT%H:%M:%S}.{ns:09d}Z stdout F {line}",
    "kubectl": lambda t, ns, line, **k: f"{t:%Y-%m-%dT%H:%M:%S}.{ns:09d}Z {line}",
    "journald": lambda t, ns, line, host, pid, **k: f"{t:%Y-%m-%dT%H:%M:%S}+0000 {host} vllm[{pid}]: {line}",
    "journald-json": lambda t, ns, line, host, pid, boot, seq: _journald_json(t, host, pid, boot, seq, line),
    "podman": lambda t, ns, line, **k: f"{t:%Y-%m-%dT%H:%M:%S}.{ns:09d}+00:00 stdout F {line}",
}


CONTAINER_RUNTIMES = ("docker", "cri", "podman")  # wrappers that make a log a container's: pids of its own


def _wrap(prof: Profile, out: Path, seed: int, how: str) -> Mapping:
    if how in CONTAINER_RUNTIMES and prof.rank_by_task:
        # the kernel prints host pids, a container its own: the rank of the task a kernel line names is no longer
        # knowable (docs/how-it-decides.md: a pid inside a container is not the host pid the kernel prints)
        raise NotApplicable("the first cause is a kernel line whose rank its task tells: not from a container's pids")
    rng = random.Random(seed)
    wrapped = []
    boot = f"{rng.getrandbits(128):032x}"
    single = prof.nodes[0] if len(prof.nodes) == 1 else None

    def fn(f: str, t: Text) -> Text | None:
        if prof.kinds.get(f) not in ("vllm", "nccl") or prof.wrapped.get(f) or L.wrappers_of(t.lines):
            return None
        host = prof.file_node.get(f) or single
        if how.startswith("journald") and not host:
            return None
        ends = t.lines[-1] == ""
        body = t.lines[:-1] if ends else t.lines
        own = [timefmt.clock_of(ln, prof.year) for ln in body]
        first = next((c for c in own if c is not None), None)
        if first is None:
            return None   # no time to give the wrapper: inventing one would decide the order
        pid = _journal_pid(body, rng)
        last, new = None, []
        for i, (ln, c) in enumerate(zip(body, own)):
            t_ = c or (last.replace(microsecond=0) if last else first)
            t_ = max(t_, last + timedelta(microseconds=1)) if last else t_
            last = t_
            new.append(WRAPPERS[how](t_, t_.microsecond * 1000 + rng.randint(0, 999), ln, host=host, pid=pid,
                                     boot=boot, seq=i + 1))
        wrapped.append(f)
        t.lines = new + ([""] if ends else [])
        return t
    out = _fresh(out)
    _rewrite_all(prof, out, fn)
    if not wrapped:
        raise NotApplicable("no plain vLLM or NCCL output with times to rewrap")
    return Mapping(out, note=f"{how} around {', '.join(wrapped)}")


def _wrapper(how: str, doc: str):
    def fn(prof: Profile, out: Path, seed: int) -> Mapping:
        return _wrap(prof, out, seed, how)
    fn.__doc__ = doc
    return fn


# ------------------------------------------------------------------------------------------------------
# packing
# ------------------------------------------------------------------------------------------------------
def displayed(members: list[str]) -> dict[str, str]:
    """Member -> its name in a report (report-contract.md: a single top folder shared by every member is dropped)."""
    tops = {m.split("/", 1)[0] for m in members}
    if len(tops) == 1 and all("/" in m for m in members):
        return {m: m.split("/", 1)[1] for m in members}
    return {m: m for m in members}


def _tar(entries: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for name in sorted(entries):
            ti = tarfile.TarInfo(name)
            ti.size, ti.mtime, ti.mode = len(entries[name]), 1_790_000_000, 0o644
            tf.addfile(ti, io.BytesIO(entries[name]))
    return buf.getvalue()


def _archive(entries: dict[str, bytes], kind: str) -> bytes:
    if kind == ".zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(entries):
                zf.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), entries[name], zipfile.ZIP_DEFLATED)
        return buf.getvalue()
    raw = _tar(entries)
    return {".tar": raw, ".tar.gz": gzip.compress(raw, mtime=0),
            ".tar.zst": zstandard.ZstdCompressor().compress(raw)}[kind]


def _entries(prof: Profile, top: str = "") -> dict[str, bytes]:
    return {f"{top}{f}": (prof.bundle / f).read_bytes() for f in prof.files}


def pack_top(prof: Profile, out: Path, seed: int) -> Mapping:
    """The bundle inside one folder (a ticket's attachment folder)."""
    rng = random.Random(seed)
    top = f"incident-{rng.randint(1000, 9999)}"
    out = _fresh(out)
    shutil.copytree(prof.bundle, out / top)
    return Mapping(out, files={f: f"{top}/{f}" for f in prof.files}, note=f"inside {top}/")


def _pack(prof: Profile, out: Path, seed: int, kind: str) -> Mapping:
    rng = random.Random(seed)
    top = f"bundle-{rng.randint(1000, 9999)}/" if rng.random() < 0.5 else ""
    entries = _entries(prof, top)
    shown = displayed(list(entries))
    out = _fresh(out)
    path = out / f"support{kind}"
    path.write_bytes(_archive(entries, kind))
    return Mapping(path, files={f: shown[f"{top}{f}"] for f in prof.files},
                   note=f"{path.name}" + (f" (members under {top})" if top else " (members at the top)"))


def _packer(kind: str):
    def fn(prof: Profile, out: Path, seed: int) -> Mapping:
        return _pack(prof, out, seed, kind)
    fn.__doc__ = f"The bundle as one {kind} file (members as stored; a single shared top folder is dropped)."
    return fn


def pack_nested(prof: Profile, out: Path, seed: int) -> Mapping:
    """An archive inside an archive: outer.tar.gz holding a ticket folder with logs.<ext> and a note;
    files are then named `logs.<ext>/<member>` (the outer's single top folder dropped)."""
    rng = random.Random(seed)
    kind = rng.choice([".tar.gz", ".zip", ".tar.zst"])
    inner_top = f"collect-{rng.randint(100, 999)}/" if rng.random() < 0.5 else ""
    inner = _archive(_entries(prof, inner_top), kind)
    ticket = f"ticket-{rng.randint(10000, 99999)}"
    outer = {f"{ticket}/logs{kind}": inner,
             f"{ticket}/ticket.txt": b"customer support bundle, collected by the on-call; see logs archive\n"}
    out = _fresh(out)
    path = out / "attachment.tar.gz"
    path.write_bytes(_archive(outer, ".tar.gz"))
    return Mapping(path, files={f: f"logs{kind}/{inner_top}{f}" for f in prof.files},
                   note=f"{path.name} > {ticket}/logs{kind}" + (f" > {inner_top}" if inner_top else ""))


# ------------------------------------------------------------------------------------------------------
# benign noise, a graceful stop, a missing node
# ------------------------------------------------------------------------------------------------------
NOISE = tomllib.loads((HERE / "noise.toml").read_text(encoding="utf-8"))
ALARM = re.compile(r"\b(?:ERROR|CRITICAL|FATAL|Traceback|NCCL WARN|Xid|SXid|segfault|Killed process|Out of memory|"
                   r"oom-kill|Link DOWN|Link down|link down|AER|fatal|Fatal|Error|error|failed|Failed|FAILED|"
                   r"Exception|exited|SIGTERM|SIGKILL|Aborted|timeout|Timeout|Terminated|Killed)\b")
SERVING = re.compile(r"Application startup complete|Uvicorn running on|Avg prompt throughput|"
                     r"Avg generation throughput|Starting vLLM API server on")
SLOT = re.compile(r"@\{(\w+)(?::([^}]*))?\}( ?)")   # (a head that ends in a space takes the space after it)
HEADS = ("vllm", "uvicorn", "nccl", "kernel", "c10")


def _clean(p: L.Line | None) -> bool:
    return p is not None and p.head != "" and not p.message[:1].isspace() and not p.message.startswith(
        ("Traceback", "^", "File ")) and "\r" not in p.message


def _render(entry: dict, near: L.Line, t: datetime | None, node: str | None, rng: random.Random,
            seconds: int = 0) -> list[str] | None:
    """The lines of a noise entry written like `near` (same wrapper, prefix and time; `seconds` later)."""
    vals = {"req": f"{rng.getrandbits(128):032x}", "ip": f"10.{rng.randint(0, 254)}.{rng.randint(0, 254)}."
            f"{rng.randint(2, 254)}", "port": str(rng.randint(32768, 60999)), "host": node or "localhost",
            "pid": str(rng.randint(2000, 90000)), "n": str(rng.randint(33000, 131000)),
            "quote": rng.choice(NOISE["quotes"]),
            "epoch": str(int((t or datetime(2026, 1, 1)).replace(tzinfo=timezone.utc).timestamp()))
            + f".{rng.randint(0, 999):03d}:{rng.randint(100, 999)}"}
    out = []
    for spec in entry["lines"]:
        head = ""

        def slot(m: re.Match) -> str:
            nonlocal head
            kind, args = m.group(1), (m.group(2) or "").split(":") if m.group(2) else []
            if kind in HEADS or kind == "raw":
                h = L.head_text(kind, args, near, t, rng.randint(0, 999_999_999))
                if h is None:
                    raise LookupError(kind)
                return h if h.endswith(" ") else h + m.group(3)
            return vals[kind] + m.group(3) if kind in vals else m.group(0)
        try:
            text = SLOT.sub(slot, spec)
        except LookupError:
            return None
        out.append(near.rewrap_at(near.prefix + text, seconds))
    return out


def noise(prof: Profile, out: Path, seed: int, group: str) -> Mapping:
    """Benign lines of one group of noise.toml inserted at seeded points, each written in the format of the
    lines around it and only where it is plausible: before the first alarming line of its file, never inside a
    multi-line event, request lines only in the API server once it serves, retries only while connecting."""
    rng = random.Random(seed)
    entries = [e for e in NOISE["noise"] if e["group"] == group]
    slots = []   # (file, index of the line after which to insert, entries that fit there)
    texts = {}
    for f in prof.files:
        t = prof.text(f)
        if t is None:
            continue
        allowed = L.wrappers_of(t.lines)
        parsed = [L.take_apart(ln.rstrip("\r"), allowed) for ln in t.lines]
        if sum(1 for p in parsed if p and p.head in HEADS) < 0.2 * max(1, len(parsed)):
            continue
        texts[f] = (t, parsed)
        n = len(t.lines) - (t.lines[-1] == "")
        stop = next((i for i, ln in enumerate(t.lines[:n]) if ALARM.search(ln)), n)
        serving = next((i for i, ln in enumerate(t.lines[:n]) if SERVING.search(ln)), n)
        before = {e["id"]: next((i for i, ln in enumerate(t.lines[:n]) if re.search(e["before"], ln)), n)
                  for e in entries if e.get("before")}
        for i in range(stop):
            p = parsed[i]
            if not _clean(p) or (i + 1 < n and not _clean(parsed[i + 1])):
                continue
            fits = [e for e in entries if p.head in e["fits"] and i < before.get(e["id"], n)
                    and (e.get("process") != "api" or L.is_api_server(p))
                    and (not e.get("needs") or re.search(e["needs"], t.text))
                    and (e.get("phase", "any") == "any" or (e["phase"] == "serving") == (i > serving))]
            if fits:
                slots.append((f, i, fits))
    if not slots:
        raise NotApplicable(f"no line where {group} noise would be plausible")
    want = rng.randint(4, 10)
    picked = []   # (file, index, lines): rendered first, inserted from the end of each file after
    for f, i, fits in rng.sample(slots, len(slots)):
        if len(picked) == want:
            break
        if any(g == f and j == i for g, j, _, _ in picked):
            continue
        t, parsed = texts[f]
        for entry in rng.sample(fits, len(fits)):
            new = _render(entry, parsed[i], parsed[i].clock(prof.year), prof.file_node.get(f), rng)
            if new:
                picked.append((f, i, new, entry["id"]))
                break
    inserted: dict[str, list[int]] = {}
    for f, i, new, _ in sorted(picked, key=lambda p: (p[0], -p[1])):
        t = texts[f][0]
        crlf = "\r" if t.lines[i].endswith("\r") else ""
        t.lines[i + 1:i + 1] = [ln + crlf for ln in new]
        inserted.setdefault(f, []).extend([i + 1] * len(new))
    used = [f"{e}@{f}:{i + 1}" for f, i, _, e in picked]
    if not inserted:
        raise NotApplicable("no noise fits this bundle")
    out = _fresh(out)
    _rewrite_all(prof, out, lambda f, t: texts[f][0] if f in inserted else None)
    return Mapping(out, inserted=inserted, note=f"{group} noise: " + ", ".join(sorted(used)))


def _noise(group: str):
    def fn(prof: Profile, out: Path, seed: int) -> Mapping:
        return noise(prof, out, seed, group)
    fn.__doc__ = f"Benign {group} lines (noise.toml group '{group}') inserted where they are plausible."
    return fn


STOP = re.compile(r"Application shutdown complete|Finished server process|Shutting down FastAPI")


def graceful_stop(prof: Profile, out: Path, seed: int) -> Mapping:
    """A healthy run stopped by its operator: SIGTERM (systemd's lines when journald keeps the log, an
    operator's note otherwise) and vLLM's shutdown trail after the last line. It must stay healthy."""
    rng = random.Random(seed)
    if not prof.truth.get("healthy"):
        raise NotApplicable("not a healthy run")
    # the API server log that ends last (of a rotated pair, the current file: the stop comes after all it wrote)
    targets = []
    for f in prof.files:
        t = prof.text(f)
        if t is None or prof.kinds.get(f) != "vllm" or STOP.search(t.text) or not SERVING.search(t.text):
            continue
        allowed = L.wrappers_of(t.lines)
        api = [p for ln in t.lines if (p := L.take_apart(ln.rstrip("\r"), allowed)) and p.head in ("vllm", "uvicorn")
               and L.is_api_server(p)]
        if api:
            ends_at = max((c for ln in t.lines if (c := timefmt.clock_of(ln, prof.year))), default=None)
            targets.append((ends_at is not None, ends_at or datetime.min, f, t, api[-1]))
    if not targets:
        raise NotApplicable("no API server log to stop, or it is stopped already")
    *_, f, t, near = max(targets, key=lambda x: x[:3])
    ends = t.lines[-1] == ""
    body = t.lines[:-1] if ends else t.lines
    last = max((c for ln in body if (c := timefmt.clock_of(ln, prof.year))), default=None)
    after = near.clock(prof.year)
    if last is None or after is None:
        raise NotApplicable("the API server's lines carry no time")
    gap = int((last - after).total_seconds()) + rng.randint(20, 90)
    pid = re.search(r"APIServer pid=(\d+)", near.prefix)
    trail = {"id": "shutdown", "lines": [ln.replace("@{apipid}", pid.group(1) if pid else "1")
                                         for ln in NOISE["shutdown"]["lines"]]}
    new = _render(trail, near, after + timedelta(seconds=gap), prof.file_node.get(f), rng, gap)
    if near.ident:   # journald: systemd stops the unit
        unit = near.ident
        sd = lambda s, text: near.rewrap_at(text, s, ident="systemd[1]")  # noqa: E731
        new = [sd(gap - 1, f"Stopping {unit}.service - {unit}..."), *new,
               sd(gap + 2, f"{unit}.service: Deactivated successfully."),
               sd(gap + 2, f"Stopped {unit}.service - {unit}.")]
    t.lines = body + new + ([""] if ends else [])
    out = _fresh(out)
    _rewrite_all(prof, out, lambda g, tt: t if g == f else None)
    if not near.ident:
        when = after + timedelta(seconds=gap - 2)
        (out / f"operator-note-{rng.randint(100, 999)}.txt").write_text(
            f"maintenance: drained the endpoint, then stopped the server at {when:%Y-%m-%d %H:%M} UTC "
            f"(SIGTERM, graceful); it exited 0. Nothing else was wrong.\n", encoding="utf-8")
    return Mapping(out, expect={"outcome": "stopped"}, note=f"shutdown trail appended to {f}")


def drop_node(prof: Profile, out: Path, seed: int) -> Mapping:
    """One node's folder removed: the answer may change, the report must name the missing node."""
    rng = random.Random(seed)
    if len(prof.node_dirs) < 2:
        raise NotApplicable("not one folder per node")
    folder = rng.choice(sorted(prof.node_dirs))
    out = _fresh(out)
    shutil.copytree(prof.bundle, out, dirs_exist_ok=True)
    shutil.rmtree(out / folder)
    node = prof.node_dirs[folder]
    return Mapping(out, expect={"missing_nodes": [node], "score_only": ["missing"]},
                   note=f"{folder}/ removed (node {node})")


# ------------------------------------------------------------------------------------------------------
# the registry
# ------------------------------------------------------------------------------------------------------
TRANSFORMS: dict[str, Callable[[Profile, Path, int], Mapping]] = {
    "rename-hosts": rename_hosts,
    "renumber-pids": renumber_pids,
    "rename-files": rename_files,
    "shift-clock": shift_clock,
    "skew-within": skew_within,
    "skew-beyond": skew_beyond,
    "wrap-docker": _wrapper("docker", "Plain vLLM/NCCL output as docker json-file records."),
    "wrap-cri": _wrapper("cri", "Plain vLLM/NCCL output as CRI log records (containerd)."),
    "wrap-kubectl": _wrapper("kubectl", "Plain vLLM/NCCL output as `kubectl logs --timestamps`."),
    "wrap-journald": _wrapper("journald", "Plain vLLM/NCCL output as `journalctl -o short-iso`."),
    "wrap-journald-json": _wrapper("journald-json", "Plain vLLM/NCCL output as `journalctl -o json`."),
    "wrap-podman": _wrapper("podman", "Plain vLLM/NCCL output as podman's k8s-file log (CRI-O's format)."),
    "pack-top": pack_top,
    "pack-tgz": _packer(".tar.gz"),
    "pack-zip": _packer(".zip"),
    "pack-zst": _packer(".tar.zst"),
    "pack-nested": pack_nested,
    "noise-requests": _noise("requests"),
    "noise-warnings": _noise("warnings"),
    "noise-retries": _noise("retries"),
    "noise-kernel": _noise("kernel"),
    "graceful-stop": graceful_stop,
    "drop-node": drop_node,
}


def apply(prof: Profile, name: str, seed: int, out: Path) -> Mapping:
    """Write transform `name` of the profiled case to `out` (replaced); raises NotApplicable."""
    return TRANSFORMS[name](prof, Path(out), seed)
