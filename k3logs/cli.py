"""The command line: options in, library calls, errors out as one line and an exit status. Nothing else."""
from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from . import __version__
from .errors import ExitStatus, K3LogsError, UsageError
from .settings import Settings

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _fail(message: str, status: int = ExitStatus.ERROR) -> None:
    from . import redact
    click.echo(f"k3logs: error: {' '.join(redact.visible(redact.text(message)).split())}", err=True)  # one line
    sys.exit(int(status))


def _print(text: str, fmt: str = "text", nl: bool = True) -> None:
    """Everything a command prints on stdout passes here: no character from a bundle reaches the terminal
    as a control sequence (JSON escapes them, other text shows them as \\xNN)."""
    from .redact import shown
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
            _fail(str(e), e.exit_status)
        except KeyboardInterrupt:
            _fail("interrupted", ExitStatus.INTERRUPTED)
        except (MemoryError, RecursionError) as e:
            if debug:
                raise
            _fail(f"ran out of {'memory' if isinstance(e, MemoryError) else 'stack'}; lower --batch-bytes or "
                  f"the limits (see --help)")
        except OSError as e:
            if _is_closed_pipe(e):
                _closed_pipe()
            if debug:
                raise
            _fail(f"{e.strerror or e}: {e.filename or ''}".rstrip(": "))
        except Exception as e:  # a bug: say so plainly, no traceback unless asked
            if debug:
                raise
            _fail(f"internal error ({type(e).__name__}: {e}); rerun with --debug and report it")

    return wrapper


def bundle_options(fn):
    """Options shared by every command that reads a bundle."""
    return _stacked(fn, [
        click.option("--patterns", "patterns", multiple=True, type=click.Path(exists=True, file_okay=False,
                     path_type=Path), help="Extra signature folder (repeatable); same id replaces a built-in."),
        click.option("--tz", default="UTC", show_default=True,
                     help="Zone of log times that carry none (vLLM, dmesg -T, nvidia-smi)."),
        click.option("--skew-tolerance", type=float, default=2.0, show_default=True,
                     help="Seconds; per-node clock offsets below this are reported, not applied."),
        *_read_limits("Longer lines are truncated (default 256 KiB)."),
        click.option("--no-redact", is_flag=True, help="Keep secrets (tokens, keys, passwords) in the output: "
                     "for local use only."),
        _DEBUG,
    ])


_DEBUG = click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")


def _read_limits(line_help: str) -> list:
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


def _stacked(fn, opts: list):
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
    return _stacked(fn, WINDOW_OPTIONS)


def _settings(tz: str, skew_tolerance: float, no_redact: bool = False, since: str | None = None,
              until: str | None = None, nodes: tuple = (), ranks: tuple = (), **limits) -> Settings:
    try:
        from zoneinfo import ZoneInfo
        ZoneInfo(tz)
    except Exception as e:
        raise UsageError(f"unknown time zone {tz!r}; use an IANA name such as UTC or Europe/Berlin") from e
    from .window import Window
    s = Settings(tz=tz, skew_tolerance=skew_tolerance, redact=not no_redact,
                 window=Window(since, until, tuple(nodes), tuple(ranks), tz))
    return s.with_limits(**{k: v for k, v in limits.items() if v is not None})


def _catalogue(patterns):
    from .catalogue import load_catalogue
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
            _fail(e.format_message() + where, ExitStatus.ERROR)
        except click.ClickException as e:
            _fail(e.format_message(), e.exit_code)
        except click.exceptions.Abort:
            _fail("interrupted", ExitStatus.INTERRUPTED)
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


@cli.command()
@click.argument("bundles", metavar="BUNDLE...", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["md", "json", "html"]), default="md", show_default=True,
              help="md for people, json for machines, html: one self-contained page with the timeline picture "
                   "and the lines around every cited line.")
@click.option("-o", "--out", type=click.Path(), help="Write the report to this file instead of stdout; to a folder "
              "(existing, or a path ending in '/') as report.md + timeline.svg, report.json or report.html.")
@click.option("--context-lines", type=click.IntRange(0, 50), default=None,
              help="Lines of the bundle shown before and after each cited line (html: 3 by default; json: "
                   "`evidence_context`, 0 by default).")
@click.option("--reference", type=click.Path(path_type=Path), default=None, metavar="BUNDLE",
              help="A bundle of the last good run: the report gets a short 'what changed' section (md, html) "
                   "or key `reference_diff` (json); `k3logs diff` gives the whole comparison.")
@window_options
@bundle_options
@handle_errors
def analyze(bundles, fmt, out, context_lines, reference, patterns, tz, skew_tolerance, **limits):
    """Diagnose one incident bundle (folder, archive or log file; - reads it from standard input), or
    several that are one incident (a bundle per node: `k3logs analyze node-a.tar.gz node-b.tar.gz`).

    Exit status: 0 no incident, 1 incident diagnosed, 2 bad usage or unreadable bundle, 3 inconclusive (nothing
    in the bundle can show an incident: no log of the deployment, or logs that end before it was ready).

    \b
    Example:
        k3logs analyze ./bundle --format json -o report.json
        k3logs analyze ./bundle -o incident/          # incident/report.md + incident/timeline.svg
        k3logs analyze ./bundle --format html -o report.html
        k3logs analyze ./bundle --reference ./last-good-bundle
    """
    from . import held, output
    from .api import analyze as run_analysis
    stdin = "-" in [str(b) for b in bundles]
    if stdin and len(bundles) > 1:
        raise UsageError("- (standard input) is the only bundle when it is given")
    for b in bundles:  # a bad -o fails before a bundle is read
        where = output.target(out, None if stdin else b)
    if context_lines is None:
        context_lines = 3 if fmt == "html" else 0
    settings, cat = _settings(tz, skew_tolerance, **limits), _catalogue(patterns)
    bundle, display = bundles[0], None
    if stdin:
        bundle, display = held.from_stdin(settings.limits.max_total_bytes), held.STDIN_NAME
    elif len(bundles) > 1:
        bundle, display = held.combined(bundles, settings.limits.max_total_bytes), " + ".join(map(str, bundles))
    from .progress import showing
    with showing("analyze"):
        if reference is None:
            report, section = run_analysis(bundle, settings, cat, context_lines, display=display), None
        else:
            from .api import analyze_with_reference
            report, section = analyze_with_reference(bundle, reference, settings, cat, context_lines)
    if where.path is None:
        text = output.render(report, fmt)
        _print(text if section is None else _with_section(text, fmt, section), fmt, nl=False)
    else:
        written = output.write(report, fmt, where)
        if section is not None:   # the report as written, with the reference section added
            for p in written:
                if p.suffix in (".md", ".json", ".html"):
                    output._write(p, _with_section(p.read_text(encoding="utf-8"), p.suffix[1:], section))
        if where.folder:
            click.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
    sys.exit(report.exit_status)


def _with_section(text: str, fmt: str, section: dict) -> str:
    """The analyze report with the short diff against the reference: an extra key in JSON, a section at the
    end of the markdown, before the end of the HTML body."""
    import html
    import json
    from .diff import reference_markdown
    if fmt == "json":
        from .redact import json_safe
        doc = json.loads(text)
        doc["reference_diff"] = section
        return json_safe(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"
    md = reference_markdown(section)
    if fmt == "html":
        block = f"<section><pre>{html.escape(md)}</pre></section>"
        return text.replace("</body>", block + "</body>", 1) if "</body>" in text else text + block
    return text.rstrip("\n") + "\n" + md


@cli.command()
@click.argument("failing", type=click.Path(path_type=Path))
@click.argument("reference", type=click.Path(path_type=Path), required=False)
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True,
              help="md for people, json for machines (shape: k3logs/diff.schema.json).")
@bundle_options
@handle_errors
def diff(failing, reference, fmt, patterns, tz, skew_tolerance, **limits):
    """What the FAILING run does differently from the REFERENCE run (the last good one): every environment
    fact per node, ranked by how often that kind of change causes incidents; the lifecycle landmarks side by
    side and where the failing run departs; the messages the reference never printed. With one bundle: its
    nodes compared with each other, and the odd node out.

    Exit status: 0 nothing that matters differs, 1 something does, 2 bad usage or an unreadable bundle.

    \b
    Example:
        k3logs diff incident-0412.tar.gz last-good-0405/
        k3logs diff incident-0412.tar.gz              # its nodes with each other
        k3logs diff incident/ reference/ --format json
    """
    from .api import diff as run_diff
    from .diff import render_markdown
    report = run_diff(failing, reference, _settings(tz, skew_tolerance, **limits), _catalogue(patterns))
    _print(report.to_json() if fmt == "json" else render_markdown(report), fmt, nl=fmt != "json")
    sys.exit(report.exit_status)


@cli.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@bundle_options
@handle_errors
def sniff(bundle, fmt, patterns, tz, skew_tolerance, **limits):
    """Say what each file of a bundle is, and why (decided by content, not by name).

    \b
    Example:
        k3logs sniff ./bundle
    """
    import json
    from .api import sniff_bundle
    rows = sniff_bundle(bundle, _settings(tz, skew_tolerance, **limits))
    if fmt == "json":
        _print(json.dumps([r.__dict__ for r in rows], indent=2, ensure_ascii=False), "json")
        return
    width = max([len(r.file) for r in rows] + [4])
    _print(f"{'file':{width}}  {'kind':14}  {'lines':>9}  {'bytes':>11}  reason")
    for r in rows:
        _print(f"{r.file:{width}}  {r.kind:14}  {r.lines:>9}  {r.bytes:>11}  {r.reason}")


@cli.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Output file; - for standard output (JSON lines unless --format says otherwise).")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]), default=None,
              help="Default: from the output file's extension, else parquet (jsonl for -).")
@window_options
@bundle_options
@handle_errors
def events(bundle, out, fmt, patterns, tz, skew_tolerance, **limits):
    """Write every line of a bundle as the event table (one schema, UTC times), batch by batch.

    \b
    Example:
        k3logs events ./bundle -o events.parquet
        python -c "import polars as pl; print(pl.read_parquet('events.parquet').head())"
    """
    from . import redact
    from .export import skipped_summary, write_events
    to_stdout = str(out) == "-"
    fmt = fmt or ("jsonl" if to_stdout else {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(
        out.suffix.lower(), "parquet"))
    from .progress import showing
    settings, skipped = _settings(tz, skew_tolerance, **limits), []
    with showing("events"):
        n = write_events(bundle, out, fmt, settings, _catalogue(patterns), skipped)
    said = skipped_summary(skipped)
    said = redact.text(said) if settings.redact else said
    click.echo(f"wrote {n} events to {'standard output' if to_stdout else out}" + (f"; {said}" if said else ""),
               err=True)


@cli.command()
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True, help="The bundle to write (.tar.gz).")
@click.option("--container", metavar="NAME", default=None, help="Also the docker container's logs, inspect, "
              "launch command, versions and pip freeze.")
@click.option("--pod", metavar="NS/NAME", default=None, help="The same for a Kubernetes pod (kubectl).")
@click.option("--since", metavar="DURATION", default=None, help="Container/pod logs and journal from this long "
              "ago only (90s, 30m, 2h, 1d).")
@click.option("--timeout", type=float, default=None, help="Seconds per command, instead of each command's own.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--no-redact", is_flag=True, help="Keep secrets (tokens, keys, passwords) in the bundle.")
@click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")
@handle_errors
def collect(out, container, pod, since, timeout, force, no_redact):
    """Collect this node's evidence into one bundle for `k3logs analyze` (read-only commands, each with a
    timeout; what was not available is said in the bundle's manifest.json).

    Exit status: 0 the bundle was written (even if some commands were missing or failed), 2 bad usage.

    \b
    Example:
        k3logs collect -o node-a.tar.gz --container vllm --since 2h
        k3logs collect -o node-b.tar.gz --pod llm-prod/k3-serve-0
    """
    from . import collect as collecting

    result = collecting.collect(out, container=container, pod=pod, since=since, redact_secrets=not no_redact,
                                timeout=timeout, force=force,
                                progress=lambda run: click.echo(collecting.run_line(run), err=True))
    for line in collecting.summary_lines(result):
        click.echo(line, err=True)



# ------------------------------------------------------------------------------------------------------
# captured requests and responses (prefix caching, tool calls)
# ------------------------------------------------------------------------------------------------------
def capture_options(fn):
    """The read limits, --no-redact and --debug (captures have no clocks nor signatures)."""
    return _stacked(fn, [
        *_read_limits("A longer line is skipped, not parsed (default 64 MiB here: one line holds a whole request)."),
        click.option("--no-redact", is_flag=True, help="Keep secrets in the output: for local use only."),
        _DEBUG,
    ])


def _capture_settings(no_redact: bool, **limits) -> Settings:
    from .captures import capture_settings
    s = Settings(redact=not no_redact).with_limits(**{k: v for k, v in limits.items() if v is not None})
    return capture_settings(s)


def _emit(data, fmt: str, markdown) -> None:
    """A capture check's result on stdout; with JSON (which has no room for them) its notes go to stderr."""
    import json

    from . import redact
    if fmt == "json":
        for note in data.notes:
            click.echo(f"k3logs: note: {redact.visible(note)}", err=True)
    _print(json.dumps(data.to_json(), indent=2, ensure_ascii=False) if fmt == "json" else markdown(data), fmt,
           nl=fmt == "json")


@cli.command()
@click.argument("requests", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@capture_options
@handle_errors
def prefix(requests, fmt, no_redact, **limits):
    """Where captured requests that should share a prompt prefix stop sharing it, and why.

    REQUESTS is a JSON-lines file of chat/completions request bodies (bare, or wrapped with an id as gateways
    log them; .gz/.zst too) or a bundle (folder, archive) holding such files. Offsets count characters of the
    canonical prompt (docs/captures.md). Exit status: 0 no divergence, 1 divergences found, 2 nothing
    readable or no request found.

    \b
    Example:
        k3logs prefix captures/requests.jsonl
        k3logs prefix incident.tar.gz --format json
    """
    from .errors import BundleError
    from .prefix import check_requests, render_markdown
    report = check_requests(requests, _capture_settings(no_redact, **limits))
    if report.requests == 0:
        raise BundleError(f"no captured request in {requests}: expected JSON lines holding chat/completions "
                          f"request bodies, bare or wrapped ({{\"id\": ..., \"request\": {{...}}}})")
    _emit(report, fmt, render_markdown)
    sys.exit(1 if report.divergences else 0)


@cli.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@capture_options
@handle_errors
def toolcalls(bundle, fmt, no_redact, **limits):
    """Check every captured tool call against its request's tool schemas; sort failures into model/parser
    (the raw response is malformed) and gateway (the forwarded copy is not the raw one).

    BUNDLE is a JSON-lines capture file (.gz/.zst too) or a bundle holding such files (docs/captures.md).
    Exit status: 0 every tool call passes, 1 some fail, 2 nothing readable or no exchange found.

    \b
    Example:
        k3logs toolcalls gateway-captures.jsonl.zst
        k3logs toolcalls incident/ --format json
    """
    from .errors import BundleError
    from .toolcalls import check_bundle, render_markdown
    summary = check_bundle(bundle, _capture_settings(no_redact, **limits))
    if summary.exchanges == 0:
        raise BundleError(f"no captured exchange in {bundle}: expected JSON lines holding a request with its "
                          f"response ({{\"id\": ..., \"request\": {{...}}, \"response\": {{...}}}})"
                          + (f"; {summary.notes[0]}" if summary.notes else ""))
    _emit(summary, fmt, render_markdown)
    sys.exit(1 if summary.failed else 0)


@cli.command()
@click.argument("archive", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Output folder: incidents.parquet and reports/ (a second run resumes).")
@click.option("-j", "--jobs", type=int, default=None, help="Worker processes (default: one per core); with "
              "--ray local, the CPUs of the local Ray instance.")
@click.option("--ray", "ray_address", metavar="ADDRESS", default=None, help="Run the bundles as Ray tasks on the "
              "cluster at ADDRESS (auto, HOST:6379, ray://HOST:10001) or 'local'; needs k3logs[ray].")
@click.option("--summary", is_flag=True, help="Then print the markdown summary of OUT.")
@click.option("--bundle-timeout", type=float, default=None, metavar="SECONDS", help="Stop a bundle's analysis "
              "after this long (its worker is killed, its row says so; default 300).")
@bundle_options
@handle_errors
def scan(archive, out, jobs, ray_address, summary, bundle_timeout, patterns, tz, skew_tolerance, **limits):
    """Analyse every bundle (folder or archive file) directly under ARCHIVE, in parallel; resumable.

    Writes OUT/incidents.parquet (one row per bundle, sorted by path) and OUT/reports/*.json. A bundle that
    fails or runs out of time is recorded with its error and the scan goes on. Exit status: 0 no incident,
    1 incidents found, 2 bad usage or ARCHIVE unreadable, 3 some bundles could not be analysed; stopped
    early (rows finished so far kept): 130 Ctrl-C, 143 SIGTERM.

    \b
    Example:
        k3logs scan /data/old-incidents -o scan-out --jobs 8 --summary
        k3logs scan /shared/incidents -o scan-out --ray auto
    """
    import signal

    from . import progress
    from .api import scan_archive
    from .scan import Terminated, sigterm_stops_the_scan
    from .scan_summary import summarize
    settings = _settings(tz, skew_tolerance, **limits)
    try:
        with sigterm_stops_the_scan():
            result = scan_archive(archive, out, settings, patterns, jobs, ray_address, progress.for_stderr("scan"),
                                  bundle_timeout)
    except Terminated:
        _fail("terminated; the rows finished so far are kept", 128 + signal.SIGTERM)
    if result.warning:
        from . import redact
        click.echo(f"k3logs: warning: {redact.visible(result.warning)}", err=True)
    others = f"; {len(result.others)} other file(s) under ARCHIVE ignored" if result.others else ""
    click.echo(f"{len(result.rows)} bundles ({len(result.analysed)} analysed, {len(result.unchanged)} unchanged): "
               f"{result.incidents} incidents, {result.failed} failed{others} -> {out}", err=True)
    if summary:
        _print(summarize(result.rows))
    sys.exit(result.exit_status)


@cli.command("scan-summary")
@click.argument("out", type=click.Path(path_type=Path))
@click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")
@handle_errors
def scan_summary(out):
    """Print the markdown summary of a finished scan (OUT of `k3logs scan`) without scanning again.

    \b
    Example:
        k3logs scan-summary scan-out > recurring.md
    """
    from .api import read_scan
    from .scan_summary import summarize
    _print(summarize(read_scan(out)))


@cli.command("schema")
@click.argument("which", type=click.Choice(["report", "diff"]), default="report")
def schema_cmd(which):
    """Print the JSON Schema of `analyze --format json` (report) or of `diff --format json` (diff).

    \b
    Example:
        k3logs schema > report.schema.json
    """
    import json
    if which == "report":
        from .report import schema
    else:
        from .diff import schema
    _print(json.dumps(schema(), indent=2, ensure_ascii=False), "json")


@cli.group()
def signatures():
    """List, test and check the signature catalogue.

    \b
    Example:
        k3logs signatures check --fail-on-issues
    """


@signatures.command("list")
@click.option("--patterns", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--debug", is_flag=True, hidden=True)
@handle_errors
def signatures_list(patterns):
    """List every signature: id, category, role, title.

    \b
    Example:
        k3logs signatures list | grep nccl
    """
    cat = _catalogue(patterns)
    for s in cat.signatures:
        click.echo(f"{s.id:40} {s.category:24} {s.role:8} {s.title}")
    click.echo(f"{len(cat.signatures)} signatures, {len(cat.xid)} Xid codes", err=True)


@signatures.command("test")
@click.option("--patterns", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--debug", is_flag=True, hidden=True)
@handle_errors
def signatures_test(patterns):
    """Replay every signature's samples through the parser: match lines fire, near misses stay quiet.

    \b
    Example:
        k3logs signatures test --patterns ./my-patterns
    """
    from .progress import showing
    from .validate import check_samples
    cat = _catalogue(patterns)
    with showing("signatures test", len(cat.signatures), "signatures"):
        issues = [i for i in check_samples(cat) if i.severity == "error"]
    for i in issues:
        click.echo(str(i))
    click.echo(f"{len(issues)} failing sample(s)", err=True)
    sys.exit(1 if issues else 0)


@signatures.command("check")
@click.option("--patterns", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--fail-on-issues", is_flag=True, help="Exit 1 when any error (or warning) is found.")
@click.option("--junit", "junit_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write JUnit XML: a test case per catalogue file, failing with its issues.")
@click.option("--sarif", "sarif_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write SARIF 2.1.0: a finding per issue, on its file and line.")
@click.option("--debug", is_flag=True, hidden=True)
@handle_errors
def signatures_check(patterns, fail_on_issues, junit_out, sarif_out):
    """Validate the catalogue: schema, regexes, samples, collisions; every problem with file and line.

    \b
    Example:
        k3logs signatures check --patterns ./my-patterns --fail-on-issues
    """
    from .catalogue import load_catalogue
    from .validate import check_samples
    cat, issues = load_catalogue(tuple(patterns), collect_errors=True)
    if not any(i.severity == "error" for i in issues):
        issues += check_samples(cat)
    for i in issues:
        click.echo(str(i))
    click.echo(f"{len(cat.signatures)} signatures, {len(issues)} issue(s)", err=True)
    if junit_out or sarif_out:
        from . import ci_formats
        from .catalogue import pattern_dirs
        files = sorted({str(p) for d in pattern_dirs(tuple(patterns)) for p in Path(d).rglob("*.toml")}
                       | {i.location.path for i in issues})
        if junit_out:
            ci_formats.write(junit_out, ci_formats.check_junit(issues, files))
        if sarif_out:
            ci_formats.write(sarif_out, ci_formats.check_sarif(issues))
    if fail_on_issues and issues:
        sys.exit(1)
    if any(i.severity == "error" for i in issues):
        sys.exit(1)


@cli.command("eval")
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--min-score", type=float, default=1.0, show_default=True,
              help="Exit 1 when the share of fully right cases is below this.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--junit", "junit_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write JUnit XML: a test case per corpus case, failing with the fields it gets wrong.")
@click.option("--sarif", "sarif_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write SARIF 2.1.0: a finding per wrong field, on the case's truth.json.")
@bundle_options
@handle_errors
def eval_cmd(corpus, min_score, fmt, junit_out, sarif_out, patterns, tz, skew_tolerance, **limits):
    """Score k3logs against the truth.json of every case in a corpus folder.

    After the cases: right answers per field, per truth category, the confusion of categories, the false
    alarms on healthy cases and, for metamorphic variants (a truth that names its `variant`, as
    `benchmarks/metamorphic.py --write-all` writes them), the failures per transform.

    \b
    Example:
        k3logs eval corpora/
    """
    import json
    from .api import evaluate_corpus
    from .evaluate import CRITERIA, OPTIONAL, find_cases, load_truth, render_tables, summary, tables
    from .progress import showing
    dirs = {c.name: c for c in find_cases(corpus)}
    with showing("eval", len(dirs), "cases"):
        scores = evaluate_corpus(corpus, _settings(tz, skew_tolerance, **limits), _catalogue(patterns))
    for s in scores:   # a case that failed to run still belongs to its transform
        if s.error and s.variant is None and s.case in dirs:
            s.variant = load_truth(dirs[s.case]).get("variant")
    summ, tabs = summary(scores), tables(scores)
    from . import ci_formats
    if junit_out:
        ci_formats.write(junit_out, ci_formats.eval_junit(scores, corpus))
    if sarif_out:
        ci_formats.write(sarif_out, ci_formats.eval_sarif(scores, dirs, corpus))
    if fmt == "json":
        click.echo(json.dumps({"cases": [s.__dict__ | {"passed": s.passed} for s in scores], "summary": summ,
                               "tables": tabs}, indent=2, default=str))
    else:
        shown = CRITERIA + tuple(c for c in OPTIONAL if any(c in s.ok for s in scores))
        click.echo(f"{'case':48} {'ok':3} " + " ".join(f"{c:12}" for c in shown))
        for s in scores:
            marks = " ".join(f"{('yes' if s.ok[c] else 'NO') if c in s.ok else '-':12}" for c in shown)
            click.echo(f"{s.case:48} {'OK' if s.passed else 'BAD':3} {marks}" + (f" {s.error}" if s.error else ""))
            if not s.passed and not s.error:
                bad = [c for c in shown if c in s.ok and not s.ok[c]]
                click.echo(f"{'':48}     got {({c: s.got[c] for c in bad})} want {({c: s.want[c] for c in bad})}")
        for line in render_tables(tabs):
            click.echo(line)
        click.echo(" ".join(f"{k}={v:.2%}" if k != "false_alarms" else f"{k}={int(v)}" for k, v in summ.items()))
    sys.exit(0 if summ["cases"] >= min_score else 1)
