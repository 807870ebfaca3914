"""The commands over many bundles and the catalogue: scan an archive and summarise it, the JSON Schemas, the signatures
(list, test, check), eval on a corpus."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from .main import bundle_options, cli, fail, handle_errors, load_patterns, print_out, settings_of


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

    from k3logs import progress
    from k3logs.scan.run import Terminated, scan_archive, sigterm_stops_the_scan
    from k3logs.scan.summary import summarize
    settings = settings_of(tz, skew_tolerance, **limits)
    try:
        with sigterm_stops_the_scan():
            result = scan_archive(archive, out, settings, patterns, jobs, ray_address, progress.for_stderr("scan"),
                                  bundle_timeout)
    except Terminated:
        fail("terminated; the rows finished so far are kept", 128 + signal.SIGTERM)
    if result.warning:
        from k3logs.gate import message
        click.echo(f"k3logs: warning: {message(result.warning)}", err=True)
    others = f"; {len(result.others)} other file(s) under ARCHIVE ignored" if result.others else ""
    click.echo(f"{len(result.rows)} bundles ({len(result.analysed)} analysed, {len(result.unchanged)} unchanged): "
               f"{result.incidents} incidents, {result.failed} failed{others} -> {out}", err=True)
    if summary:
        print_out(summarize(result.rows))
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
    from k3logs.scan.run import read_scan
    from k3logs.scan.summary import summarize
    print_out(summarize(read_scan(out)))


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
        from k3logs.contract import schema
    else:
        from k3logs.diff.model import schema
    print_out(json.dumps(schema(), indent=2, ensure_ascii=False), "json")


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
    cat = load_patterns(patterns)
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
    from k3logs.evaluate.patterns import check_samples
    from k3logs.progress import showing
    cat = load_patterns(patterns)
    with showing("signatures test", len(cat.signatures), "signatures"):
        issues = [i for i in check_samples(cat) if i.severity == "error"]
    for i in issues:
        click.echo(str(i))
    click.echo(f"{len(issues)} failing sample(s)", err=True)
    sys.exit(1 if issues else 0)


@cli.group()
def patterns():
    """Check every file of patterns/ (and extra signature folders).

    \b
    Example:
        k3logs patterns check --fail-on-issues
    """


@patterns.command("check")
@click.option("--patterns", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--fail-on-issues", is_flag=True, help="Exit 1 when any error (or warning) is found.")
@click.option("--junit", "junit_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write JUnit XML: a test case per pattern file, failing with its issues.")
@click.option("--sarif", "sarif_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write SARIF 2.1.0: a finding per issue, on its file and line.")
@click.option("--debug", is_flag=True, hidden=True)
@handle_errors
def patterns_check(patterns, fail_on_issues, junit_out, sarif_out):
    """Validate every pattern file: schema, regexes, samples replayed (signatures and landmarks), collisions;
    every problem with file and line.

    \b
    Example:
        k3logs patterns check --patterns ./my-patterns --fail-on-issues
        k3logs signatures check                      # its former name, the same check
    """

    from k3logs.catalogue.load import load_catalogue, pattern_dirs
    from k3logs.evaluate.patterns import check_files, check_samples
    cat, issues = load_catalogue(tuple(patterns), collect_errors=True)
    if not any(i.severity == "error" for i in issues):
        issues += check_samples(cat)
    issues += check_files(pattern_dirs()[0])
    for i in issues:
        click.echo(str(i))
    click.echo(f"{len(cat.signatures)} signatures, {len(issues)} issue(s)", err=True)
    if junit_out or sarif_out:
        from k3logs.evaluate import ci_formats
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


signatures.add_command(patterns_check, "check")  # its former name, kept


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

    from k3logs.evaluate.score import (CRITERIA, OPTIONAL, evaluate_corpus, find_cases, load_truth, render_tables,
                                        summary, tables)
    from k3logs.progress import showing
    dirs = {c.name: c for c in find_cases(corpus)}
    with showing("eval", len(dirs), "cases"):
        scores = evaluate_corpus(corpus, settings_of(tz, skew_tolerance, **limits), load_patterns(patterns))
    for s in scores:   # a case that failed to run still belongs to its transform
        if s.error and s.variant is None and s.case in dirs:
            s.variant = load_truth(dirs[s.case]).get("variant")
    summ, tabs = summary(scores), tables(scores)
    from k3logs.evaluate import ci_formats
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
