"""The command line: options in, library calls, errors out as one line and an exit status. Nothing else.
main.py holds the group, the shared options and the error handling; each other module a family of commands."""
from __future__ import annotations

from . import captures, corpus, incident  # noqa: F401  (each registers its commands on the group)
from .main import _size_pools, cli, main

__all__ = ["cli", "main", "_size_pools"]
