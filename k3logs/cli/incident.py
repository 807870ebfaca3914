"""The commands about one incident: analyze (the report), diff (against the last good run), sniff (what each file is),
events (the event table), collect (a node's evidence)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from k3logs.errors import UsageError

from .main import bundle_options, cli, handle_errors, load_patterns, print_out, settings_of, window_options


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
    from k3logs.ingest import held
    from k3logs.pipeline import analyze as run_analysis
    from k3logs.report import output
    stdin = "-" in [str(b) for b in bundles]
    if stdin and len(bundles) > 1:
        raise UsageError("- (standard input) is the only bundle when it is given")
    for b in bundles:  # a bad -o fails before a bundle is read
        where = output.target(out, None if stdin else b)
    if context_lines is None:
        context_lines = 3 if fmt == "html" else 0
    settings, cat = settings_of(tz, skew_tolerance, **limits), load_patterns(patterns)
    bundle, display = bundles[0], None
    if stdin:
        bundle, display = held.from_stdin(settings.limits.max_total_bytes), held.STDIN_NAME
    elif len(bundles) > 1:
        bundle, display = held.combined(bundles, settings.limits.max_total_bytes), " + ".join(map(str, bundles))
    from k3logs.progress import showing
    with showing("analyze"):
        if reference is None:
            report, section = run_analysis(bundle, settings, cat, context_lines, display=display), None
        else:
            from k3logs.diff.run import analyze_with_reference
            report, section = analyze_with_reference(bundle, reference, settings, cat, context_lines)
    then = None if section is None else (lambda text, f: _with_section(text, f, section))
    if where.path is None:
        print_out(output.render(report, fmt, then=then), fmt, nl=False)
    else:
        written = output.write(report, fmt, where, then)
        if where.folder:
            click.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
    sys.exit(report.exit_status)


def _with_section(text: str, fmt: str, section: dict) -> str:
    """The analyze report with the short diff against the reference: an extra key in JSON, a section at the
    end of the markdown, before the end of the HTML body."""
    import html
    import json

    from k3logs.diff.render import reference_markdown
    if fmt == "json":
        from k3logs.gate import json_safe
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
              help="md for people, json for machines (shape: k3logs/diff/diff.schema.json).")
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
    from k3logs.diff.render import render_markdown
    from k3logs.diff.run import diff as run_diff
    report = run_diff(failing, reference, settings_of(tz, skew_tolerance, **limits), load_patterns(patterns))
    print_out(report.to_json() if fmt == "json" else render_markdown(report), fmt, nl=fmt != "json")
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

    from k3logs.pipeline import sniff_bundle
    rows = sniff_bundle(bundle, settings_of(tz, skew_tolerance, **limits))
    if fmt == "json":
        print_out(json.dumps([r.__dict__ for r in rows], indent=2, ensure_ascii=False), "json")
        return
    width = max([len(r.file) for r in rows] + [4])
    print_out(f"{'file':{width}}  {'kind':14}  {'lines':>9}  {'bytes':>11}  reason")
    for r in rows:
        print_out(f"{r.file:{width}}  {r.kind:14}  {r.lines:>9}  {r.bytes:>11}  {r.reason}")


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
    from k3logs.gate import release
    from k3logs.pipeline import write_events
    from k3logs.report.export import skipped_summary
    to_stdout = str(out) == "-"
    fmt = fmt or ("jsonl" if to_stdout else {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}.get(
        out.suffix.lower(), "parquet"))
    from k3logs.progress import showing
    settings, skipped = settings_of(tz, skew_tolerance, **limits), []
    with showing("events"):
        n = write_events(bundle, out, fmt, settings, load_patterns(patterns), skipped)
    said = skipped_summary(skipped)
    said = release(said, settings)
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
    from k3logs.collect import run as collecting

    result = collecting.collect(out, container=container, pod=pod, since=since, redact_secrets=not no_redact,
                                timeout=timeout, force=force,
                                progress=lambda run: click.echo(collecting.run_line(run), err=True))
    for line in collecting.summary_lines(result):
        click.echo(line, err=True)
