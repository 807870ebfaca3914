"""Names from a bundle made safe to show and to use as keys: control characters escaped, overlong names shortened with
a hash of what was cut."""
from __future__ import annotations

import hashlib
import posixpath
import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # (kept here: what we escape to show a name)
MAX_NAME = 1024   # characters of a name shown whole
MAX_PART = 128    # a longer folder or file name in a name longer than MAX_NAME is shortened with its hash


def printable(name: str) -> str:
    """A name as it may be shown: bytes that were not UTF-8 (tarfile and os.scandir keep them as lone
    surrogates, which no output can encode) become U+FFFD, control characters (a newline, a terminal escape)
    become \\xNN; a name longer than MAX_NAME has its long parts shortened, each keeping its start, its end
    (the extension) and a hash of the whole part (two long names stay two names)."""
    if _CONTROL.search(name):
        try:
            name = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            pass
        name = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0xd800 else "\ufffd", name)
    if len(name) > MAX_NAME:
        name = "/".join(_short(part) for part in name.split("/"))
        if len(name) > MAX_NAME:  # (many parts: the path's end stays, after the hash of the whole)
            name = f"{_digest(name)}~{name[-(MAX_NAME - 20):]}"
    return name


def _short(part: str) -> str:
    return part if len(part) <= MAX_PART else f"{part[:60]}~{_digest(part)}~{part[-40:]}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def sanitize(name: str) -> str:
    """A member name as a relative POSIX path: no leading '/', no '..' segments, no empty parts."""
    name = name.replace("\\", "/")
    parts = [p for p in posixpath.normpath("/" + name).split("/") if p not in ("", ".", "..")]
    return "/".join(parts) or "_"
