"""The commands over captured requests and responses: prefix (why a prefix does not hit) and toolcalls (tool calls
against their schemas)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from k3logs.settings import Settings

from .main import DEBUG_OPTION, cli, handle_errors, print_out, read_limits, stacked


# ------------------------------------------------------------------------------------------------------
# captured requests and responses (prefix caching, tool calls)
# ------------------------------------------------------------------------------------------------------
def capture_options(fn):
    """The read limits, --no-redact and --debug (captures have no clocks nor signatures)."""
    return stacked(fn, [
        *read_limits("A longer line is skipped, not parsed (default 64 MiB here: one line holds a whole request)."),
        click.option("--no-redact", is_flag=True, help="Keep secrets in the output: for local use only."),
        DEBUG_OPTION,
    ])


def _capture_settings(no_redact: bool, **limits) -> Settings:
    from k3logs.captures.read import capture_settings
    s = Settings(redact=not no_redact).with_limits(**{k: v for k, v in limits.items() if v is not None})
    return capture_settings(s)


def _emit(data, fmt: str, markdown) -> None:
    """A capture check's result on stdout; with JSON (which has no room for them) its notes go to stderr."""
    import json

    from k3logs.gate import message
    if fmt == "json":
        for note in data.notes:
            click.echo(f"k3logs: note: {message(note)}", err=True)
    print_out(json.dumps(data.to_json(), indent=2, ensure_ascii=False) if fmt == "json" else markdown(data), fmt,
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
    from k3logs.captures.prefix import check_requests, render_markdown
    from k3logs.errors import BundleError
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
    from k3logs.captures.toolcalls import check_bundle, render_markdown
    from k3logs.errors import BundleError
    summary = check_bundle(bundle, _capture_settings(no_redact, **limits))
    if summary.exchanges == 0:
        raise BundleError(f"no captured exchange in {bundle}: expected JSON lines holding a request with its "
                          f"response ({{\"id\": ..., \"request\": {{...}}, \"response\": {{...}}}})"
                          + (f"; {summary.notes[0]}" if summary.notes else ""))
    _emit(summary, fmt, render_markdown)
    sys.exit(1 if summary.failed else 0)
