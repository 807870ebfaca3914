"""k3logs: offline forensics for GPU LLM-inference incidents."""
from __future__ import annotations

__version__ = "0.1.0"
