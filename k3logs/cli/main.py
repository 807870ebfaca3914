"""The group, its shared options and settings, and the one place where errors become a line and an exit status."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from k3logs import __version__
from k3logs.errors import ExitStatus, K3LogsError, UsageError
from k3logs.settings import Settings

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def fail(message: str, status: int = ExitStatus.ERROR) -> None:
    from k3logs.gate import message as one_line
    click.echo(f"k3logs: error: {one_line(message)}", err=True)
    sys.exit(int(status))


def print_out(text: str, fmt: str = "text", nl: bool = True) -> None:
    """Everything a command prints on stdout passes here: no character from a bundle reaches the terminal
    as a control sequence (JSON escapes them, other text shows them as \\xNN)."""
    from k3logs.gate import shown
    click.echo(shown(text, fmt), nl=nl)


def _closed_pipe() -> None:
    """The reader of stdout went away (`k3logs signatures list | head`): stop at once and quietly; stdout goes
    to /dev/null so that Python's last flush at exit has nowhere to fail."""
    import os
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(int(ExitStatus.CLOSED_PIPE))


def _is_closed_pipe(e: OSError) -> bool:
    """EPIPE, also as polars and pyarrow pass it on (an OSError whose text alone says 'os error 32')."""
    import errno
    return isinstance(e, BrokenPipeError) or e.errno == errno.EPIPE or "os error 32" in str(e) \
        or "[Errno 32]" in str(e)


def main() -> None:
    """The console entry point: the commands, and a quiet end on a closed pipe in any of them."""
    try:
        cli()
    except OSError as e:
        if not _is_closed_pipe(e):
            raise
        _closed_pipe()


def handle_errors(fn):
    """One place where errors become a line on stderr and an exit status (report-contract.md)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        debug = kwargs.pop("debug", False)
        try:
            return fn(*args, **kwargs)
        except K3LogsError as e:
            if debug:
                raise
            fail(str(e), e.exit_status)
        except KeyboardInterrupt:
            fail("interrupted", ExitStatus.INTERRUPTED)
        except (MemoryError, RecursionError) as e:
            if debug:
                raise
            fail(f"ran out of {'memory' if isinstance(e, MemoryError) else 'stack'}; lower the limits "
                 f"(--max-line-bytes, --max-member-bytes; see --help)")
        except OSError as e:
            if _is_closed_pipe(e):
                _closed_pipe()
            if debug:
                raise
            fail(f"{e.strerror or e}: {e.filename or ''}".rstrip(": "))
        except Exception as e:  # a bug: say so plainly, no traceback unless asked
            if debug:
                raise
            fail(f"internal error ({type(e).__name__}: {e}); rerun with --debug and report it")

    return wrapper


def bundle_options(fn):
    """Options shared by every command that reads a bundle."""
    return stacked(fn, [
        click.option("--patterns", "patterns", multiple=True, type=click.Path(exists=True, file_okay=False,
                     path_type=Path), help="Extra signature folder (repeatable); same id replaces a built-in."),
        click.option("--tz", default="UTC", show_default=True,
                     help="Zone of log times that carry none (vLLM, dmesg -T, nvidia-smi)."),
        click.option("--skew-tolerance", type=float, default=2.0, show_default=True,
                     help="Seconds; per-node clock offsets below this are reported, not applied."),
        *read_limits("Longer lines are truncated (default 256 KiB)."),
        click.option("--no-redact", is_flag=True, help="Keep secrets (tokens, keys, passwords) in the output: "
                     "for local use only."),
        DEBUG_OPTION,
    ])


DEBUG_OPTION = click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")


def read_limits(line_help: str) -> list:
    """The --max-* options of everything that reads a bundle (discover's limits)."""
    return [
        click.option("--max-total-bytes", type=int, default=None, help="Stop reading after this many "
                     "decompressed bytes (default 64 GiB)."),
        click.option("--max-member-bytes", type=int, default=None, help="Read at most this much of one file "
                     "(default 16 GiB)."),
        click.option("--max-members", type=int, default=None, help="Read at most this many files (default 40000)."),
        click.option("--max-depth", type=int, default=None, help="Archives nested deeper are skipped (default 3)."),
        click.option("--max-line-bytes", type=int, default=None, help=line_help),
        click.option("--max-ratio", type=int, default=None, help="Decompression ratio treated as a bomb "
                     "(default 1000)."),
    ]


def stacked(fn, opts: list):
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


WINDOW_OPTIONS = [
    click.option("--since", metavar="TIME", default=None, help="Only lines from this time: 2026-05-14T14:30:00 "
                 "(zone-less: in --tz), or a duration counted back from the bundle's end (90s, 15m, 2h, 1d)."),
    click.option("--until", metavar="TIME", default=None, help="Only lines up to this time (as --since)."),
    click.option("--node", "nodes", metavar="NODE", multiple=True, help="Only the lines of this node (repeatable)."),
    click.option("--rank", "ranks", metavar="RANK", type=click.IntRange(0), multiple=True,
                 help="Only the lines of this rank (repeatable)."),
]


def window_options(fn):
    """--since/--until/--node/--rank: the part of the bundle looked at (k3logs/window.py)."""
    return stacked(fn, WINDOW_OPTIONS)


def settings_of(tz: str, skew_tolerance: float, no_redact: bool = False, since: str | None = None,
              until: str | None = None, nodes: tuple = (), ranks: tuple = (), **limits) -> Settings:
    try:
        from zoneinfo import ZoneInfo
        ZoneInfo(tz)
    except Exception as e:
        raise UsageError(f"unknown time zone {tz!r}; use an IANA name such as UTC or Europe/Berlin") from e
    from k3logs.window import Window
    s = Settings(tz=tz, skew_tolerance=skew_tolerance, redact=not no_redact,
                 window=Window(since, until, tuple(nodes), tuple(ranks), tz))
    return s.with_limits(**{k: v for k, v in limits.items() if v is not None})


def load_patterns(patterns):
    from k3logs.catalogue.load import load_catalogue
    return load_catalogue(tuple(patterns))


class _Commands(click.Group):
    """click's group, with its own errors (an unknown option, a missing argument) in k3logs' one style:
    `k3logs: error: ...` on one line, exit status 2, and where to look (not click's usage block)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.UsageError as e:
            where = f" (see `{e.ctx.command_path} --help`)" if e.ctx is not None else ""
            fail(e.format_message() + where, ExitStatus.ERROR)
        except click.ClickException as e:
            fail(e.format_message(), e.exit_code)
        except click.exceptions.Abort:
            fail("interrupted", ExitStatus.INTERRUPTED)
        sys.exit(status if isinstance(status, int) else 0)


@click.group(cls=_Commands, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, prog_name="k3logs")
@click.pass_context
def cli(ctx: click.Context):
    """k3logs: what failed first in a vLLM / NCCL GPU-inference incident, where, why, and what to do.

    \b
    Example:
        k3logs analyze incident-0412.tar.gz
    """
    _size_pools(ctx.invoked_subcommand)


# commands that run a pipeline of threads each waiting on polars' pool while its query runs there (`events`:
# parsing, folding and writing at once): the pool gets a thread per core (with one, the stages queued
# for it: 3% slower, the same peak)
PIPELINED = ("events",)


def _size_pools(command: str | None = None) -> None:
    """k3logs runs threads of its own (Settings.jobs) around polars and pyarrow calls, so: polars' pool gets
    the cores those leave, at least one (more threads than cores only add hand-offs, and memory: each
    thread keeps allocator caches), or a thread per core for a PIPELINED command. Polars' jemalloc gets
    one arena: memory one thread frees is reused by the others (with an arena per thread `events` peaked
    30 MiB higher, with 10% more page faults). pyarrow's buffers (lines being split, Parquet pages) come
    from jemalloc, which hands freed memory back at once (mimalloc keeps tens of MiB per thread). Peak
    memory is a bound we keep. Polars reads its settings once, when first imported: this runs before that
    (a user's own values are kept)."""
    import os
    if "polars" not in sys.modules:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        threads = cores if command in PIPELINED else max(1, cores - Settings().jobs)
        os.environ.setdefault("POLARS_MAX_THREADS", str(threads))
        os.environ.setdefault("_RJEM_MALLOC_CONF", "narenas:1")
    import pyarrow as pa
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:  # (a pyarrow built without it)
        pass
