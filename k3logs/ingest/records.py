"""Log records whose time is one of their fields, several lines from their message: a log platform's export in
YAML (`gcloud logging read`, whose default format it is) holds one document per entry, and the entry's
`timestamp:` key may come after the message it times; a YAML List of Kubernetes events (`kubectl get events -o
yaml`, a must-gather's events.yaml) holds one item per event, its time among its keys. Each line of such a document
or item is stamped with that time, in front, where the rfc3339 wrapper reads it; the line numbers stay those of the
file."""
from __future__ import annotations

from k3logs.catalogue.regexes import Regexes

INGEST = Regexes("ingest.toml")  # yaml_document_start, yaml_entry_time, yaml_list_item, yaml_item_time
# an event's own time, first that it has: when it happened, else when it was first and last seen
ITEM_TIMES = ("eventTime", "firstTimestamp", "lastTimestamp")
WRAPPER = "rfc3339"              # the wrapper that reads the stamp


def stamp_yaml_entries(text: str) -> str | None:
    """`text` with each line of a YAML document (or of an item of a List's `items:`) stamped with its own time, or
    None when the text is no stream of timed YAML documents or items (most of them have a time)."""
    lines = text.split("\n")
    docs = _list_items(lines, lines.index("items:")) if "items:" in lines else _documents(lines)
    timed = [d for d in docs if d[2]]
    if not timed or 2 * len(timed) < len(docs):
        return None
    for lo, hi, t in timed:
        for i in range(lo, hi):
            lines[i] = f"{t} {lines[i]}"
    return "\n".join(lines)


def _documents(lines: list[str]) -> list[tuple[int, int, str | None]]:
    """(first line, end, time) of each document of a stream of YAML documents ('---' before each)."""
    start, when = INGEST["yaml_document_start"], INGEST["yaml_entry_time"]
    docs: list[tuple[int, int, str | None]] = []
    first, t = None, None
    for i, ln in enumerate(lines + ["---"]):
        if start.match(ln):
            if first is not None:
                docs.append((first, i, t))
            first, t = i, None
        elif first is not None and t is None and (m := when.match(ln)):
            t = m.group("t_iso")
    return docs


def _list_items(lines: list[str], at: int) -> list[tuple[int, int, str | None]]:
    """(first line, end, time) of each item of the top-level `items:` list at line `at`."""
    item, when = INGEST["yaml_list_item"], INGEST["yaml_item_time"]
    items: list[tuple[int, int, str | None]] = []
    indent, first, times = None, None, {}
    for i in range(at + 1, len(lines) + 1):
        ln = lines[i] if i < len(lines) else None
        m = item.match(ln) if ln is not None else None
        if indent is None and m:
            indent = m.group(1)
        new = m is not None and m.group(1) == indent
        inside = ln is not None and (not ln.strip() or new or ln.startswith((indent or "") + " "))
        if first is not None and (new or not inside):
            items.append((first, i, next((times[k] for k in ITEM_TIMES if k in times), None)))
            first, times = None, {}
        if not inside:
            break
        if new:
            first = i
        elif first is not None and (t := when.match(ln)) and len(ln) - len(ln.lstrip()) == len(indent or "") + 2:
            times.setdefault(t.group("key"), t.group("t_iso"))
    return items
