"""Log records whose time is one of their fields, several lines from their message: a log platform's export in
YAML (`gcloud logging read`, whose default format it is) holds one document per entry, and the entry's
`timestamp:` key may come after the message it times. Each line of such a document is stamped with that time,
in front, where the rfc3339 wrapper reads it; the line numbers stay those of the file."""
from __future__ import annotations

from k3logs.catalogue.regexes import Regexes

INGEST = Regexes("ingest.toml")  # yaml_document_start, yaml_entry_time
WRAPPER = "rfc3339"              # the wrapper that reads the stamp


def stamp_yaml_entries(text: str) -> str | None:
    """`text` with each line of a YAML document stamped with the document's own time, or None when the text is
    no stream of timed YAML documents (most of its documents have a time)."""
    lines = text.split("\n")
    start, when = INGEST["yaml_document_start"], INGEST["yaml_entry_time"]
    docs: list[tuple[int, int, str | None]] = []   # (first line, end, time)
    first, t = None, None
    for i, ln in enumerate(lines + ["---"]):
        if start.match(ln):
            if first is not None:
                docs.append((first, i, t))
            first, t = i, None
        elif first is not None and t is None and (m := when.match(ln)):
            t = m.group("t_iso")
    timed = [d for d in docs if d[2]]
    if not timed or 2 * len(timed) < len(docs):
        return None
    for lo, hi, t in timed:
        for i in range(lo, hi):
            lines[i] = f"{t} {lines[i]}"
    return "\n".join(lines)
