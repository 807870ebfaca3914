"""The catalogue loaded: built-in and extra pattern folders read, checked and kept, in this process and (pickled, by
content) under the user's cache folder."""
from __future__ import annotations

from pathlib import Path

from k3logs.errors import CatalogueError, SourceLocation
from k3logs.resources import data_dir

from .cache import CACHE_ENV, content_key, kept  # noqa: F401 - CACHE_ENV: the switch tests set
from .read import Issue
from .signatures import Catalogue, Signature, _load_categories, _load_signature_file, _load_xid

# catalogues loaded in this process, by their folders and every pattern file's size and modification time: a
# load takes a quarter of a second, more than the analysis of a small bundle (a library or test process
# analysing bundle after bundle loads once; an edited file is read again)
_LOADED: dict[tuple, tuple] = {}
_LOADED_MAX = 8
# ... and across processes: the checked catalogue kept under the user's cache folder (cache.py) by the hash of
# every pattern file's content and of this module (a CLI run unpickles it in 10 ms).


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


def _content_key(key: tuple) -> str:
    """The hash of the folders (and whether each exists), every pattern file's content, the code of this package
    and Python."""
    dirs, files = key
    return content_key([name for name, _, _ in files], "".join(f"{d}\0{d.is_dir()}\0" for d in dirs))


def _cached_load(dirs: tuple[Path, ...], key: tuple | None) -> tuple[Catalogue, list[Issue]]:
    """_load, through the cache folder (see cache.py)."""
    if key is None:
        return _load(dirs)
    return kept("catalogues", f"catalogue-{_content_key(key)}", lambda: _load(dirs),
                lambda got: isinstance(got, tuple) and len(got) == 2 and isinstance(got[0], Catalogue))


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
