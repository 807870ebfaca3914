"""The user's cache folder for what is costly to make and cheap to keep: checked catalogues, compiled templates,
parsed pattern files. What is loaded from it runs as code (pickles), so it is only ever a folder this user alone
can write; any trouble with it only means doing the work again."""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
import tomllib
from pathlib import Path

# K3LOGS_CACHE_DIR names another folder; empty or "off" turns the cache off.
CACHE_ENV = "K3LOGS_CACHE_DIR"


def cache_dir() -> Path | None:
    """Where the cache is kept (None: nowhere)."""
    named = os.environ.get(CACHE_ENV)
    if named is not None:
        return None if named.strip() in ("", "off") else Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "k3logs"


def private_cache(name: str) -> Path | None:
    """A folder `name` under the cache folder that only this user can write (created), or None: what is loaded
    from it (pickled catalogues, compiled templates) runs as code, so it is never anyone else's."""
    folder = cache_dir()
    if folder is None or not hasattr(os, "getuid"):
        return None
    try:
        sub = folder / name
        sub.mkdir(mode=0o700, parents=True, exist_ok=True)
        return sub if owned(folder) and owned(sub) else None
    except OSError:
        return None


def owned(path: Path) -> bool:
    """Whether only this user can have written `path` (a pickle is loaded from nowhere else)."""
    st = path.stat()
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def kept(sub: str, key: str, make, accept):
    """make(), kept pickled in the cache folder `sub` under `key` (a hash of everything make() depends on) and
    read back from there while `accept` takes what was kept."""
    folder = private_cache(sub)
    if folder is None:
        return make()
    path = folder / f"{key}.pickle"
    try:
        if path.is_file() and owned(path):
            with open(path, "rb") as f:
                data = pickle.load(f)
            if accept(data):
                return data
    except Exception:  # noqa: BLE001 - a cache is only ever a shortcut
        pass
    data = make()
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001
        pass
    return data


def content_key(paths, extra: str = "") -> str:
    """The hash of this package's code (what is pickled is its records), Python's version, `extra` and the content
    of each of `paths`: what a record made from those pattern files depends on."""
    h = hashlib.sha256()
    for code in sorted(Path(__file__).parent.glob("*.py")):
        h.update(code.read_bytes())
    h.update(sys.version.encode() + b"\0" + extra.encode() + b"\0")
    for path in paths:
        h.update(str(path).encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return h.hexdigest()[:32]


def parse_toml(text: str) -> dict:
    """tomllib.loads, kept by the text's hash: parsing the built-in pattern files each run is a tenth of a second,
    as much as the analysis of a small bundle. (A TOMLDecodeError is the caller's to report.)"""
    return kept("toml", hashlib.sha256(text.encode()).hexdigest()[:32], lambda: tomllib.loads(text),
                lambda data: isinstance(data, dict))
