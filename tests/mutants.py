"""Seeded mutants of corpus bundles for the fuzz campaign (#12): byte flips, truncations, huge numbers, odd
dates, control characters in lines and names, and nested packing, each with planted secrets that must reach
no output. One mutant = (case, seed): the same pair always gives the same bundle.

Used by tests/test_fuzz_mutants.py (a sample in CI) and benchmarks/fuzz.py (the whole campaign)."""
from __future__ import annotations

import io
import random
import re
import shutil
import string
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

MUTATIONS = ("flip", "truncate", "number", "date", "control", "name", "pack")
TEXT_SUFFIXES = (".log", ".txt", ".out", ".json", ".yaml", ".sh", "")


@dataclass
class Mutant:
    case: str
    seed: int
    path: Path                               # the bundle to analyse (a folder or an archive file)
    secrets: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _secret(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))


def _numbers(rng: random.Random) -> str:
    return rng.choice([str(10 ** rng.randint(19, 60)), "9" * 5000, "1e999", "-1", str(2 ** 64), "nan", "0" * 40,
                       "-" + "9" * 30, "inf"])


def _date(rng: random.Random) -> str:
    return rng.choice(["0000-01-01T00:00:00Z", "0001-01-01 00:00:00", "9999-12-31T23:59:59.999999999Z",
                       "2026-13-45T25:61:61Z", "1969-12-31T23:59:59Z", "00-00 00:00:00", "13-32 99:99:99",
                       "Feb 30 24:00:00", "[99999999999999999999.000000]", "[-5.000000]"])


CONTROLS = ("\x1b]52;c;Y2xpcA==\x07", "\x1b]0;title\x07", "\x1bP+q\x1b\\", "\x9b31m", "\u202e", "\x00",
            "\x1b[2J", "\r", "\x85", "\ufeff", "\udc80")


def mutate(case_dir: Path, seed: int, work: Path) -> Mutant:
    """The mutant (case, seed) of corpus case `case_dir`, written under `work`."""
    rng = random.Random(f"{case_dir.name}:{seed}")
    root = work / f"{case_dir.name}-{seed}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(case_dir / "bundle", root / "bundle", symlinks=True)
    bundle = root / "bundle"
    m = Mutant(case_dir.name, seed, bundle)
    kinds = rng.sample(MUTATIONS, rng.randint(1, 3))
    files = _files(bundle)
    for kind in kinds:
        if kind != "pack" and not files:
            continue
        target = rng.choice(files) if files else None
        if kind == "flip":
            data = bytearray(target.read_bytes())
            for _ in range(rng.randint(1, 64)):
                if data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
            target.write_bytes(bytes(data))
        elif kind == "truncate":
            data = target.read_bytes()
            target.write_bytes(data[: rng.randrange(len(data) + 1)])
        elif kind in ("number", "date", "control"):
            text = target.read_bytes().decode("utf-8", "surrogateescape")
            pattern = {"number": r"\d+", "date": r"\d{2,4}-\d{2}[-T ]\d{2}[: T]\d{2}(?::\d{2})?|\[\s*\d+\.\d+\]",
                       "control": r"\s"}[kind]
            spots = [mt.span() for mt in re.finditer(pattern, text)][:2000]
            for a, b in sorted(rng.sample(spots, min(len(spots), rng.randint(1, 8))), reverse=True):
                new = _numbers(rng) if kind == "number" else _date(rng) if kind == "date" else rng.choice(CONTROLS)
                text = text[:a] + new + text[b if kind != "control" else a:]
            target.write_bytes(text.encode("utf-8", "surrogateescape"))
        elif kind == "name":
            new = target.with_name(rng.choice(CONTROLS).replace("\x00", "") + "`|<b>" + "\u202e" + target.name)
            try:
                target.rename(new)
            except (OSError, ValueError):
                continue
        m.applied.append(kind)
        files = _files(bundle)
    _plant(bundle, rng, m)
    if "pack" in kinds:
        m.path = _pack(bundle, rng)
        m.applied.append("pack")
    return m


def _plant(bundle: Path, rng: random.Random, m: Mutant) -> None:
    """Secret lines inserted at line boundaries of text files (after the damage: a secret damaged by a flip
    would no longer be the secret planted)."""
    texts = [p for p in _files(bundle) if p.suffix in TEXT_SUFFIXES] or _files(bundle)
    for target in rng.sample(texts, min(len(texts), 2)):
        hf, pw, tok = "hf_" + _secret(rng) + _secret(rng), _secret(rng), _secret(rng)
        m.secrets += [hf, pw, tok]
        lines = target.read_bytes().split(b"\n")
        at = rng.randrange(len(lines) + 1)
        planted = [f"HF_TOKEN={hf} ok", f"connecting to postgres://admin:{pw}@db:5432/app",
                   f"--api-key {tok}"][rng.randrange(3)]
        lines.insert(at, planted.encode())
        target.write_bytes(b"\n".join(lines))


def _pack(bundle: Path, rng: random.Random) -> Path:
    """The bundle as an archive, sometimes an archive in an archive."""
    members = [(p.relative_to(bundle.parent).as_posix(), p.read_bytes()) for p in _files(bundle)]
    kind = rng.choice(["tar.gz", "zip", "tar.zst", "tar.gz/zip", "zip/tar.gz", "zip/zip"])
    data = _archive(members, kind.split("/")[-1])
    if "/" in kind:
        data = _archive([("inner." + kind.split("/")[-1], data)], kind.split("/")[0])
    out = bundle.parent / f"bundle.{kind.split('/')[0]}"
    out.write_bytes(data)
    shutil.rmtree(bundle)
    return out


def _archive(members: list[tuple[str, bytes]], kind: str) -> bytes:
    buf = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in members:
                # a name with bytes that are not UTF-8 (a mutated name, surrogate-escaped): stored as those bytes
                # (zip's legacy code page, which maps every byte), as a zip from another system would hold it
                raw = name.encode("utf-8", "surrogateescape")
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError:
                    name = raw.decode("cp437")
                zf.writestr(name, data)
        return buf.getvalue()
    with tarfile.open(fileobj=buf, mode="w:gz" if kind == "tar.gz" else "w") as tf:
        for name, data in members:
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    return zstandard.ZstdCompressor().compress(buf.getvalue()) if kind == "tar.zst" else buf.getvalue()


# ------------------------------------------------------------------------------------------------------
# what every run must hold
# ------------------------------------------------------------------------------------------------------
CONTROL_OUT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def problems(exit_code: int, stdout: str, stderr: str, files: dict[str, str], secrets: list[str]) -> list[str]:
    """What is wrong with one run: an exit status outside the contract, more than one line or a traceback
    on stderr, a control character on stdout, a planted secret or an 8-character fragment of one anywhere."""
    out = []
    if exit_code not in (0, 1, 2, 3):
        out.append(f"exit status {exit_code}")
    if "Traceback" in stderr or len(stderr.strip().splitlines()) > 1:  # (stdout may quote the bundle's own)
        out.append(f"stderr: {stderr.strip()[:300]!r}")
    if CONTROL_OUT.search(stdout):
        out.append(f"control character on stdout: {CONTROL_OUT.search(stdout).group()!r}")
    everything = {"stdout": stdout, "stderr": stderr, **files}
    for s in secrets:
        frags = {s[i:i + 8] for i in range(len(s) - 7)}
        leaked = sorted(name for name, text in everything.items() if any(f in text for f in frags))
        if leaked:
            out.append(f"secret {s[:6]}... in {', '.join(leaked)}")
    return out
