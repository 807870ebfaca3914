"""Which cause signatures fire on at least one corpus case (CI keeps this list empty).

    python tools/coverage.py corpora/
"""
from __future__ import annotations

import sys
from pathlib import Path

from k3logs.catalogue.load import load_catalogue
from k3logs.evaluate.score import find_cases
from k3logs.pipeline import run


def fired_signatures(root: Path) -> dict[str, list[str]]:
    cat = load_catalogue()
    where: dict[str, list[str]] = {}
    for case in find_cases(root):
        a = run(case / "bundle", catalogue=cat)
        for sig in set(a.detections["sig"].to_list()):
            where.setdefault(sig, []).append(case.name)
    return where


def unfired(cat, fired) -> list[str]:
    """One line per cause signature of `cat` that is not in `fired`."""
    return [f"{s.id:45} {s.category:24} {s.location}" for s in cat.signatures if s.role == "cause" and s.id not in fired]


def main(argv: list[str]) -> int:
    root = Path(argv[1] if len(argv) > 1 else "corpora")
    cat = load_catalogue()
    missing = unfired(cat, fired_signatures(root))
    for line in missing:
        print(line)
    print(f"{len(missing)} of {sum(s.role == 'cause' for s in cat.signatures)} cause signatures fire on no case",
          file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
