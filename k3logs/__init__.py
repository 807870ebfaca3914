"""k3logs: offline forensics for GPU LLM-inference incidents."""
from __future__ import annotations

__version__ = "0.1.0"

from .api import analyze, sniff_bundle, write_events  # noqa: E402
from .catalogue import load_catalogue  # noqa: E402
from .errors import K3LogsError  # noqa: E402
from .report import Report  # noqa: E402

__all__ = ["analyze", "sniff_bundle", "write_events", "load_catalogue", "Report", "K3LogsError", "__version__"]
