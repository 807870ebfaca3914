"""One exception root that carries where it happened, and the exit statuses of the contract."""
from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class ExitStatus(IntEnum):
    """Exit statuses of every command (report-contract.md)."""

    NO_INCIDENT = 0
    INCIDENT = 1
    ERROR = 2  # bad usage, or a bundle that could not be read at all
    SOME_FAILED = 3  # scan: finished, but some bundles could not be analysed (their rows carry the error)
    INTERRUPTED = 130
    CLOSED_PIPE = 141  # the reader of stdout went away (`| head`): as a program SIGPIPE ended (128 + 13)


@dataclass(frozen=True)
class SourceLocation:
    path: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path


class K3LogsError(Exception):
    """Root of every error k3logs raises on purpose; its text is one line for the user."""

    exit_status = ExitStatus.ERROR

    def __init__(self, message: str, source: SourceLocation | None = None):
        super().__init__(message)
        self.message = message
        self.source = source

    def __str__(self) -> str:
        return f"{self.message} (in {self.source})" if self.source else self.message


class BundleError(K3LogsError):
    """The bundle cannot be read at all (missing, not an archive we know, empty of anything readable)."""


class CatalogueError(K3LogsError):
    """A pattern file is invalid; `problems` lists every issue found."""

    def __init__(self, message: str, problems: list | None = None, source: SourceLocation | None = None):
        super().__init__(message, source)
        self.problems = problems or []


class UsageError(K3LogsError):
    """Options that do not fit together."""
