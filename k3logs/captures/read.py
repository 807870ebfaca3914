"""Captured requests and responses (JSON lines, as gateways and request loggers write them) read from a file,
a compressed file or a bundle, for `k3logs prefix` and `k3logs toolcalls`.

A capture file holds one JSON object per line, in one of these shapes (keys are matched exactly):

- a bare request body: an OpenAI chat/completions request (`messages`, or `prompt` for completions);
- a wrapped exchange: `{"id" | "request_id" | "exchange_id": ..., "request" | "body" | "request_body": {...},
  "response" | "raw_response" | "upstream_response": {...}, "forwarded" | "client_response" |
  "downstream_response": {...}}`: the request, the response vLLM returned (raw) and the response the gateway
  passed on (forwarded); any of the three may be missing, and each may be a JSON object or a string holding
  one (gateways often log bodies as strings). Records of one exchange split over several lines or files
  (a request log and a response log) are joined by their id (toolcalls).

Reading is bounded like every other read of k3logs (discover's limits; a line longer than --max-line-bytes is
cut and skipped, never parsed). A file counts as a capture file when one of its first 64 non-empty lines is a
capture record: logs beside the captures in a bundle are passed over, and only in capture files are the lines
that are not records counted as skipped (with the reason and the first file:line).
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection, Iterator

from k3logs.ingest.discover import Bundle, Skip
from k3logs.ingest.lines import iter_line_batches, open_text
from k3logs.ingest.streams import peek
from k3logs.settings import MiB, Settings

ID_KEYS = ("id", "request_id", "exchange_id", "x-request-id", "trace_id")
REQUEST_KEYS = ("request", "body", "request_body")
RESPONSE_KEYS = ("response", "raw_response", "upstream_response", "backend_response", "response_body")
FORWARDED_KEYS = ("forwarded", "forwarded_response", "client_response", "downstream_response")

LOOKAHEAD = 64  # non-empty lines of a file that may show it is a capture file
CAPTURE_MAX_LINE_BYTES = 64 * MiB  # one line is one whole request: a 1M-token prompt is a few MB of JSON


def capture_settings(settings: Settings | None) -> Settings:
    """Settings for reading captures: the default line cap is raised (a long prompt is one line), unless the
    caller chose one."""
    settings = settings or Settings()
    if settings.limits.max_line_bytes == Settings().limits.max_line_bytes:
        settings = settings.with_limits(max_line_bytes=CAPTURE_MAX_LINE_BYTES)
    return settings


@dataclass
class Capture:
    """One record of a capture file: where it is, its id (None for a bare body), and what it holds."""

    file: str
    line: int
    id: str | None
    request: dict | None = None
    response: dict | None = None    # as vLLM returned it
    forwarded: dict | None = None   # as the gateway passed it on

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class CaptureStats:
    """What was read: capture files, records, and the lines of capture files that were skipped, by reason."""

    files: list[str] = field(default_factory=list)
    records: int = 0
    skipped: Counter = field(default_factory=Counter)       # reason -> lines
    first_skipped: dict[str, str] = field(default_factory=dict)  # reason -> file:line of the first
    bundle_skipped: list[Skip] = field(default_factory=list)  # what discover could not read

    def skip(self, reason: str, where: str) -> None:
        self.skipped[reason] += 1
        self.first_skipped.setdefault(reason, where)

    def notes(self) -> list[str]:
        """One line per reason, for people (stderr, markdown)."""
        out = [f"{n} line(s) skipped: {reason} (first at {self.first_skipped[reason]})"
               for reason, n in sorted(self.skipped.items())]
        out += [f"{s.file}: {s.reason}" for s in self.bundle_skipped]
        return out


def _object(value) -> dict | None:
    """A JSON object given as an object or as a string holding one."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _first(obj: dict, keys: tuple[str, ...]):
    return next((obj[k] for k in keys if k in obj), None)


def is_request(obj) -> bool:
    return isinstance(obj, dict) and (isinstance(obj.get("messages"), list) or "prompt" in obj)


def record_of(obj, file: str, line: int) -> tuple[Capture | None, str | None]:
    """A capture record from one parsed line, or (None, why not)."""
    if not isinstance(obj, dict):
        return None, "not a JSON object"
    ident = _first(obj, ID_KEYS)
    ident = str(ident) if isinstance(ident, (str, int)) and not isinstance(ident, bool) else None
    if is_request(obj):  # a bare body: an id only if the client put one in it
        rid = obj.get("request_id")
        return Capture(file, line, str(rid) if isinstance(rid, (str, int)) else None, request=obj), None
    present = [k for k in REQUEST_KEYS + RESPONSE_KEYS + FORWARDED_KEYS if k in obj]
    if not present:
        return None, "a JSON object that is neither a request nor a wrapped exchange"
    request = _object(_first(obj, REQUEST_KEYS))
    if request is not None and not is_request(request):
        request = None
    cap = Capture(file, line, ident, request, _object(_first(obj, RESPONSE_KEYS)),
                  _object(_first(obj, FORWARDED_KEYS)))
    if cap.request is None and cap.response is None and cap.forwarded is None:
        return None, "a wrapped exchange whose request/response is not a JSON object (or not a request)"
    return cap, None


def _lines(stream, settings: Settings) -> Iterator[tuple[int, str, bool]]:
    head, stream = peek(stream)
    for batch in iter_line_batches(open_text(stream, head), settings.batch_bytes, settings.limits.max_line_bytes):
        yield from batch.iter_rows()


def read_captures(path: str | Path, settings: Settings | None = None,
                  stats: CaptureStats | None = None, only: Collection[str] | None = None) -> Iterator[Capture]:
    """Every capture record of a file, compressed file, folder or archive, in bundle order (files sorted by
    name, lines in order). `stats` (filled while iterating) says what was read and skipped. Raises
    BundleError when `path` cannot be read at all."""
    settings = capture_settings(settings)
    stats = stats if stats is not None else CaptureStats()
    bundle = Bundle(path, settings.limits)
    for member in bundle.members():
        name = member.path
        if only is not None and bundle.display(name) not in only:
            continue  # `analyze` already knows which files are captures
        found = False
        pending: list[tuple[str, str]] = []  # skips before the file is known to be a capture file
        seen = 0
        for line, text, truncated in _lines(member.stream, settings):
            stripped = text.strip()
            if not stripped:
                continue
            seen += 1
            if not found and seen > LOOKAHEAD:
                break  # not a capture file (a log beside the captures): stop reading it
            where = f"{bundle.display(name)}:{line}"
            if truncated:
                reason = f"longer than --max-line-bytes ({settings.limits.max_line_bytes}); not parsed"
                cap = None
            elif not stripped.startswith("{"):
                cap, reason = None, "not JSON"
            else:
                try:
                    cap, reason = record_of(json.loads(stripped), bundle.display(name), line)
                except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
                    cap, reason = None, "not valid JSON"
            if cap is None:
                if found:
                    stats.skip(reason, where)
                else:
                    pending.append((reason, where))
                continue
            if not found:
                found = True
                stats.files.append(bundle.display(name))
                for r, w in pending:
                    stats.skip(r, w)
                pending = []
            stats.records += 1
            yield cap
    stats.bundle_skipped = [Skip(bundle.display(s.file), s.reason) for s in bundle.skipped]
