"""An error message as a template: numbers, addresses and ids masked, so that the same error seen with other values is
one (rapidfuzz ratio SAME_TEMPLATE)."""
from __future__ import annotations

import re

from rapidfuzz import fuzz

SAME_TEMPLATE = 90         # rapidfuzz ratio (0-100) from which two masked messages are the same error
MASKS = [(re.compile(r"0x[0-9a-fA-F]+"), "<hex>"), (re.compile(r"\b\d+(?:\.\d+)?\b"), "<n>"),
         (re.compile(r"'[^']*'|\"[^\"]*\""), "<s>"), (re.compile(r"/[\w./-]+"), "<path>")]


def mask_template(text: str) -> str:
    """An error message with its numbers, addresses, quoted strings and paths masked: its template."""
    for rx, rep in MASKS:
        text = rx.sub(rep, text)
    return text.strip()


def same_template(a: str, b: str) -> bool:
    """Two masked messages are one error template (also used by `scan` to group bundles' unknown errors)."""
    return fuzz.ratio(a, b) >= SAME_TEMPLATE
