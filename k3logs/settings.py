"""Every tunable limit in one frozen dataclass, built from CLI flags (defaults documented in the README)."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from .errors import UsageError
from .window import Window

GiB = 1 << 30
MiB = 1 << 20
KiB = 1 << 10


LARGEST = (1 << 63) - 1
FLAGS = ("max_total_bytes", "max_member_bytes", "max_members", "max_depth", "max_line_bytes", "max_ratio")


@dataclass(frozen=True)
class Limits:
    """Bounds on what a bundle may make us read; exceeding one skips (and reports) the rest, never crashes."""

    max_total_bytes: int = 64 * GiB       # decompressed bytes over the whole bundle
    max_member_bytes: int = 16 * GiB      # decompressed bytes of one file
    max_members: int = 40_000             # files (archive members included): under a minute of CPU (docs/safety.md)
    max_depth: int = 3                    # archives inside archives
    max_line_bytes: int = 256 * KiB       # longer lines are truncated and flagged
    max_ratio: int = 1000                 # decompressed/compressed ratio beyond which a member is a bomb
    ratio_grace_bytes: int = 256 * MiB    # the ratio is only enforced past this many decompressed bytes
    max_dump_bytes: int = 8 * MiB         # dumps (nvidia-smi, inspect, ...) are read whole up to this size
    max_nested_zip_bytes: int = 512 * MiB  # a zip inside an archive must be held in memory to be read
    max_dir_depth: int = 32               # folder nesting

    def __post_init__(self) -> None:
        for name in FLAGS:  # (0 would read nothing; a number past 64 bits overflows where arrow compares it)
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LARGEST:
                raise UsageError(f"--{name.replace('_', '-')} must be a whole number from 1 to {LARGEST} "
                                 f"(got {value!r})")


@dataclass(frozen=True)
class Settings:
    limits: Limits = field(default_factory=Limits)
    batch_bytes: int = 8 * MiB            # bytes per parsing batch (memory stays bounded by this)
    tz: str = "UTC"                       # zone of log times that carry none (vLLM, dmesg -T, nvidia-smi)
    skew_tolerance: float = 2.0           # seconds; per-node clock offsets below this are not applied
    redact: bool = True
    jobs: int = 2                         # files parsed in parallel
    window: Window = field(default_factory=Window)  # --since/--until/--node/--rank: the part looked at

    def with_limits(self, **kw) -> "Settings":
        known = {f.name for f in fields(Limits)}
        unknown = set(kw) - known
        if unknown:
            raise UsageError(f"unknown limit(s): {', '.join(sorted(unknown))}")
        return replace(self, limits=replace(self.limits, **{k: v for k, v in kw.items() if v is not None}))
