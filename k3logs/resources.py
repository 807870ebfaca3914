"""Where the built-in data lives: inside the wheel as k3logs/_data, or beside the package in a checkout."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_dir(name: str) -> Path:
    """The built-in `patterns` or `report_templates` folder (never the current directory)."""
    packaged = Path(str(resources.files("k3logs"))) / "_data" / name
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / name
