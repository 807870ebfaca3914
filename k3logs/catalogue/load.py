"""The catalogue loaded: built-in and extra pattern folders read, checked and kept, in this process and (pickled, by
content) under the user's cache folder."""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .read import Issue
from .signatures import Catalogue, Signature, _load_categories, _load_signature_file, _load_xid

# catalogues loaded in this process, by their folders and every pattern file's size and modification time: a
# load takes a quarter of a second, more than the analysis of a small bundle (a library or test process
# analysing bundle after bundle loads once; an edited file is read again)
_LOADED: dict[tuple, tuple] = {}
_LOADED_MAX = 8
# ... and across processes: the checked catalogue kept under the user's cache folder by the hash of every
# pattern file's content and of this module (a CLI run unpickles it in 10 ms). K3LOGS_CACHE_DIR names another
# folder; empty or "off" turns it off.
CACHE_ENV = "K3LOGS_CACHE_DIR"


def pattern_dirs(extra: list[Path] | tuple[Path, ...] = ()) -> tuple[Path, ...]:
    return (data_dir("patterns"), *[Path(p) for p in extra])


def _fingerprint(dirs: tuple[Path, ...]) -> tuple:
    files = [p for d in dirs if d.is_dir() for p in sorted(d.rglob("*.toml"))]
    return tuple(d.resolve() for d in dirs), tuple((str(p), st.st_size, st.st_mtime_ns) for p in files
                                                   for st in (p.stat(),))


def load_catalogue(extra_dirs: list[Path] | tuple[Path, ...] = (), collect_errors: bool = False):
    """Load the built-in patterns plus `extra_dirs`; later folders override signatures with the same id.

    Raises CatalogueError on any error unless `collect_errors`, in which case it returns
    `(catalogue, issues)`.
    """
    dirs = pattern_dirs(extra_dirs)
    try:
        key = _fingerprint(dirs)
    except OSError:   # (a folder that changes under us: read it without the memo)
        key = None
    if key is None or key not in _LOADED:
        loaded = _cached_load(dirs, key)
        if key is not None:
            if len(_LOADED) >= _LOADED_MAX:
                _LOADED.pop(next(iter(_LOADED)))
            _LOADED[key] = loaded
    else:
        loaded = _LOADED[key]
    cat, issues = loaded[0], list(loaded[1])
    if collect_errors:
        return cat, issues
    errors = [i for i in issues if i.severity == "error"]
    if errors:
        raise CatalogueError(f"{len(errors)} problem(s) in the patterns; first: {errors[0]}", errors)
    return cat


def cache_dir() -> Path | None:
    """Where checked catalogues are kept (None: nowhere)."""
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
        return sub if _own(folder) and _own(sub) else None
    except OSError:
        return None


def _content_key(key: tuple) -> str:
    """The hash of the folders (and whether each exists), every pattern file's content, the code of this package
    (what is pickled is its records) and Python."""
    dirs, files = key
    h = hashlib.sha256()
    for code in sorted(Path(__file__).parent.glob("*.py")):
        h.update(code.read_bytes())
    h.update(sys.version.encode())
    for d in dirs:
        h.update(f"{d}\0{d.is_dir()}\0".encode())
    for name, _, _ in files:
        h.update(name.encode() + b"\0" + Path(name).read_bytes() + b"\0")
    return h.hexdigest()[:32]


def _own(path: Path) -> bool:
    """Whether only this user can have written `path` (a pickle is loaded from nowhere else)."""
    st = path.stat()
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _cached_load(dirs: tuple[Path, ...], key: tuple | None) -> tuple[Catalogue, list[Issue]]:
    """_load, through a cache folder that only this user can write. Any trouble with the cache (unreadable,
    someone else's, full disk) only means a load from the pattern files."""
    folder = private_cache("catalogues") if key is not None else None
    if folder is None:
        return _load(dirs)
    path = folder / f"catalogue-{_content_key(key)}.pickle"
    try:
        if path.is_file() and _own(path):
            with open(path, "rb") as f:
                loaded = pickle.load(f)
            if isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[0], Catalogue):
                return loaded
    except Exception:  # noqa: BLE001 - a cache is only ever a shortcut
        pass
    loaded = _load(dirs)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".catalogue-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(loaded, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001
        pass
    return loaded


def _load(dirs: tuple[Path, ...]) -> tuple[Catalogue, list[Issue]]:
    issues: list[Issue] = []
    for d in dirs:
        if not d.is_dir():
            issues.append(Issue("error", "io", "patterns folder does not exist", SourceLocation(str(d))))
    categories = _load_categories(dirs[0] / "taxonomy.toml", issues)
    xid = _load_xid(dirs[0] / "xid.toml", issues)
    by_id: dict[str, Signature] = {}
    for d in dirs:
        seen_here: dict[str, Signature] = {}
        sig_dir = d / "signatures" if (d / "signatures").is_dir() else d
        for path in sorted(sig_dir.glob("*.toml")):
            if path.name in ("taxonomy.toml", "xid.toml", "formats.toml", "landmarks.toml", "facts.toml"):
                continue
            for sig in _load_signature_file(path, issues):
                if sig.id in seen_here:
                    issues.append(Issue("error", "duplicate-id",
                                        f"signature id {sig.id!r} also defined at {seen_here[sig.id].location}",
                                        sig.location))
                seen_here[sig.id] = sig
                by_id[sig.id] = sig  # a later folder replaces a built-in signature
    signatures = tuple(sorted(by_id.values(), key=lambda s: s.id))
    for sig in signatures:
        for cat in (sig.category, *dict(sig.phase_category).values(), *sig.explains, *filter(None, [sig.states])):
            if categories and cat not in categories:
                issues.append(Issue("error", "taxonomy", f"signature {sig.id!r}: unknown category {cat!r}",
                                    sig.location))
        if sig.table == "xid" and "xid" not in sig.fields:
            issues.append(Issue("error", "table", f"signature {sig.id!r}: table xid needs a named group (?P<xid>...)",
                                sig.location))
    return Catalogue(signatures=signatures, categories=categories, xid=xid, dirs=dirs), issues
