"""k3logs: offline forensics for GPU LLM-inference incidents."""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

# imported when first used, so that importing the CLI does not import polars: the CLI sizes polars'
# thread pool first (cli._size_pools)
_EXPORTS = {"analyze": "api", "sniff_bundle": "api", "write_events": "api", "load_catalogue": "catalogue.load",
            "K3LogsError": "errors", "Report": "contract"}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
