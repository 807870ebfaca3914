"""Formats prove themselves (as lnav's do): every sample of every wrapper, prefix and line format in
patterns/formats.toml is replayed through the real parser, and must give the fields it lists."""
from __future__ import annotations

import json
from datetime import datetime, timedelta

import polars as pl
import pytest

from conftest import broken_pattern_file, parse_lines
from k3logs.errors import CatalogueError
from k3logs.catalogue.formats import Format, builtin_formats, load_formats
from k3logs.schema import LOG_KINDS

FORMATS = builtin_formats()
ALL = [*FORMATS.wrappers.values(), *FORMATS.prefixes, *FORMATS.lines]
SAMPLES = [pytest.param(f, line, dict(fields), id=f"{f.layer}-{f.name}-{i}")
           for f in ALL for i, (line, fields) in enumerate(f.samples)]

# the parsed column each group lands in, per layer (time groups are checked separately)
WRAPPER_COLS = {"stream": "stream", "host": "w_host", "ident": "ident", "pid": "pid", "pod": "w_pod",
                "container": "w_container", "task": "w_task"}
PREFIX_COLS = {"proc": "proc", "pid": "pid", "ip": "ip", "rank": "rank", "stream": "stream"}
LINE_COLS = {"loc": "loc", "host": "host", "pid": "pid", "tid": "tid", "dev": "dev", "msg": "text"}
TIME_KIND = {"t_iso": "utc", "t_local": "local", "t_md": "yearless", "t_glog": "yearless", "t_ctime": "local",
             "t_date": "utc", "t_mdy": "local", "t_syslog": "yearless", "t_uptime": "boot", "t_epoch_us": "utc",
             "t_epoch_ms": "utc"}


def groups_of(fmt: Format, line: str) -> dict[str, str | None]:
    """The format's own named groups on `line`, run by the engine the parser uses; `msg` defaults to the rest."""
    ext = pl.Series("text", [line]).str.extract_groups(f"(?P<_m>{fmt.regex})").struct.unnest().row(0, named=True)
    assert ext["_m"] is not None, f"{fmt.name} does not match its own sample {line!r}"
    if fmt.json_fields:  # read by key (a dotted key: in the objects inside): the whole line is the record
        def value(key: str):
            v = json.loads(line)
            for part in key.split("."):
                v = v.get(part) if isinstance(v, dict) else None
            return None if v is None else bytes(v).decode() if isinstance(v, list) else str(v)  # journald's bytes
        got: dict[str, str | None] = {"_m": line}
        for name, key in fmt.json_fields:   # (a field named more than once: the first of its keys the record has)
            got[name] = got.get(name) or value(key)
        return got
    if "msg" not in ext:
        ext["msg"] = line[len(ext["_m"]):]
    if fmt.csv_quoted and (ext.get("text") or "").startswith('"'):   # a quoted CSV cell, as the parser reads it
        ext["text"] = ext["text"][1:-1].replace('""', '"')
    return ext


def as_text(v) -> str:
    return str(v)


def test_every_format_has_samples_and_the_loader_accepts_the_file():
    assert FORMATS.wrappers and FORMATS.prefixes and FORMATS.lines
    assert all(f.samples for f in ALL)


@pytest.mark.parametrize("fmt,line,fields", SAMPLES)
def test_sample_groups_are_what_the_sample_says(fmt, line, fields):
    got = groups_of(fmt, line)
    for k, v in fields.items():
        assert k in got, f"{fmt.name}: sample names field {k!r} that the regex does not capture"
        assert got[k] == v, f"{fmt.name}: {k} = {got[k]!r}, sample says {v!r}"


@pytest.mark.parametrize("fmt,line,fields", [p for p in SAMPLES if p.values[0].layer == "wrapper"])
def test_wrapper_sample_is_peeled_by_the_parser(fmt, line, fields):
    r = parse_lines([line], kind="log", wrappers=(fmt.name,)).row(0, named=True)
    g = groups_of(fmt, line)
    assert r["wrapper"] == fmt.name
    for grp, col in WRAPPER_COLS.items():
        if grp in fmt.groups and g[grp] is not None:
            assert as_text(r[col]) == g[grp], f"{col} of {line!r}"
    for grp, kind in TIME_KIND.items():
        if grp in fmt.groups and g.get(grp) is not None:   # (a record read by key: the time keys it has)
            assert r["wt"] is not None and r["wt_kind"] == kind
    # the message is the tail of what the wrapper leaves (docker: JSON-unescaped), without the wrapper's head
    inner = (json.loads(f'"{g["text"]}"') if fmt.json_escaped else g["text"]) if "text" in fmt.groups \
        else line[len(g["_m"]):]
    if fmt.json_fields:
        assert r["wt"] == datetime(1970, 1, 1) + timedelta(microseconds=int(g["t_epoch_us"])) \
            if g.get("t_epoch_us") else True
    assert r["text"] and (inner or "").rstrip("\n").endswith(r["text"])
    assert not r["text"].startswith(line[:12])


@pytest.mark.parametrize("fmt,line,fields", [p for p in SAMPLES if p.values[0].layer == "prefix"])
def test_prefix_sample_is_peeled_by_the_parser(fmt, line, fields):
    r = parse_lines([line], kind="log").row(0, named=True)
    g = groups_of(fmt, line)
    for grp, col in PREFIX_COLS.items():
        if grp in fmt.groups and g[grp] is not None:
            if col == "proc" and r[col] != g[grp].strip():  # an inner prefix may name the process again
                assert line[len(g["_m"]):].lstrip().startswith("(")
                continue
            if col == "pid" and r[col] != int(g[grp]):
                assert line[len(g["_m"]):].lstrip().startswith("(")
                continue
            assert as_text(r[col]) == g[grp].strip(), f"{col} of {line!r}"
    assert not r["text"].startswith(g["_m"]), "the prefix is still in the message"


@pytest.mark.parametrize("fmt,line,fields", [p for p in SAMPLES if p.values[0].layer == "line"])
def test_line_sample_parses_to_its_source_level_time_and_message(fmt, line, fields):
    r = parse_lines([line], kind=(fmt.first_for or ("log",))[0]).row(0, named=True)
    g = groups_of(fmt, line)
    assert r["source"] == fmt.source
    for grp, col in LINE_COLS.items():
        if grp in fmt.groups or grp == "msg":
            want = g[grp]
            if grp == "msg":
                want = want.strip() if want is not None else want
                assert r[col].strip() == want, f"message of {line!r}"
            elif want is not None:
                assert as_text(r[col]) == want, f"{col} of {line!r}"
    if "level" in fmt.groups:
        assert r["level"] == dict(fmt.level_map).get(g["level"], g["level"])
        # (an optional level the line does not print leaves none)
        assert r["level"] in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") or g["level"] is None, \
            "levels are normalised"
    for grp, kind in TIME_KIND.items():
        if grp in fmt.groups and g[grp] is not None:
            assert r["lt_kind"] == kind
            if kind == "boot":
                assert r["uptime"] == float(g[grp])
            else:
                assert isinstance(r["lt"], datetime)


@pytest.mark.parametrize("fmt,line,fields", [p for p in SAMPLES if p.values[0].layer == "line"])
def test_line_sample_parses_the_same_whatever_the_file_kind(fmt, line, fields):
    """`first_for` only changes the order formats are tried in, never the result."""
    seen = {kind: parse_lines([line], kind=kind).select("source", "level", "text", "lt", "uptime").row(0)
            for kind in LOG_KINDS}
    assert len(set(seen.values())) == 1, seen


# ------------------------------------------------------------------------------------------------------
# the loader rejects broken formats, saying where
# ------------------------------------------------------------------------------------------------------
def _load(tmp_path, body: str):
    p = tmp_path / "formats.toml"
    p.write_text(body, encoding="utf-8")
    return load_formats(p)


def test_loader_reports_a_regex_the_engine_cannot_compile(tmp_path):
    with pytest.raises(CatalogueError) as e:
        _load(tmp_path, '\n[[line]]\nname = "bad"\nsource = "x"\nregex = \'^(?<=a)b\'\nsamples = [{ line = "b" }]\n')
    first = str(e.value.problems[0])
    assert "bad" in first and "formats.toml:2" in first


def test_loader_reports_missing_samples_unknown_keys_and_unanchored_regexes(tmp_path):
    with pytest.raises(CatalogueError) as e:
        _load(tmp_path, '[[line]]\nname = "a"\nsource = "x"\nregex = "b"\ncolour = "red"\n')
    problems = " | ".join(map(str, e.value.problems))
    assert "unknown keys ['colour']" in problems and "starts with ^" in problems and "needs samples" in problems


def test_loader_requires_a_source_on_line_formats(tmp_path):
    with pytest.raises(CatalogueError, match="needs a source"):
        _load(tmp_path, '[[line]]\nname = "a"\nregex = "^b"\nsamples = [{ line = "b" }]\n')


def test_a_big_mixed_batch_parses_each_line_as_it_parses_alone():
    # a batch with many unmatched rows tries formats one query each; a batch with few left first asks which
    # formats can match them (parse.FEW_ROWS): both must give every line what it gets on its own
    from k3logs.ingest.parse import FEW_ROWS
    lines = [line for f in FORMATS.lines for line, _ in f.samples] + ["a plain line", "  indented", ""]
    many = [lines[(i * 7) % len(lines)] for i in range(FEW_ROWS + 2 * len(lines))]  # every line, many times
    cols = ["source", "level", "text", "lt", "lt_kind", "uptime", "loc", "host", "pid", "tid", "dev"]
    alone = {line: parse_lines([line], kind="vllm").select(cols).row(0) for line in set(many)}
    together = parse_lines(many, kind="vllm")
    assert together.height == len(many)
    for line, got in zip(many, together.select(cols).iter_rows()):
        assert got == alone[line], line


# ------------------------------------------------------------------------------------------------------
# wrappers read by JSON key, labels, pod prefixes
# ------------------------------------------------------------------------------------------------------
JOURNAL = ('{ "__CURSOR" : "s=1;i=2", "__REALTIME_TIMESTAMP" : "1761026498406117", "_PID" : "1187", '
           '"_HOSTNAME" : "inf-l40s-07", "SYSLOG_IDENTIFIER" : "vllm", "MESSAGE" : "(APIServer pid=1187) INFO 10-21 '
           '06:01:38 [launcher.py:110] Shutting down FastAPI HTTP server." }')


def test_journald_json_fields_are_read_by_key_in_any_order():
    shuffled = json.dumps(dict(reversed(list(json.loads(JOURNAL).items()))))
    rows = parse_lines([JOURNAL, shuffled], kind="vllm", wrappers=("journald_json",))
    for r in rows.iter_rows(named=True):
        assert (r["w_host"], r["pid"], r["ident"], r["source"]) == ("inf-l40s-07", 1187, "vllm", "vllm")
        assert r["text"] == "Shutting down FastAPI HTTP server." and r["proc"] == "APIServer"
        assert r["wt"] == datetime(2025, 10, 21, 6, 1, 38, 406117) and r["wt_kind"] == "utc"


def test_a_json_line_that_is_not_a_journal_entry_is_left_alone():
    # docker's json-file record is lower-case keys; a capture is another object: neither is journald's
    rows = parse_lines(['{"log":"x\\n","stream":"stdout","time":"2026-08-11T07:35:59Z"}',
                        '{"MESSAGES": "not a journal"}', '{"_HOSTNAME": "h", "note": "no message"}'],
                       kind="log", wrappers=("journald_json",))
    assert rows["wrapper"].to_list() == ["none", "none", "none"]


def test_srun_label_is_the_task_and_the_rest_is_parsed_as_usual():
    r = parse_lines(["12: gpu-b06:4121:4121 [4] NCCL INFO Bootstrap : Using ib0:10.0.3.17<0>"], kind="nccl",
                    wrappers=("srun_label",)).row(0, named=True)
    assert (r["w_task"], r["host"], r["pid"], r["dev"], r["source"]) == (12, "gpu-b06", 4121, 4, "nccl")


def test_kubectl_prefix_keeps_the_pod_and_container_not_as_a_host():
    r = parse_lines(["[pod/vllm-l40s-0-1/vllm-worker] 2025-06-24T13:06:11.2Z INFO 06-24 13:06:11 [x.py:1] y"],
                    kind="vllm", wrappers=("kubectl_prefix", "rfc3339")).row(0, named=True)
    assert (r["w_pod"], r["w_container"], r["w_host"]) == ("vllm-l40s-0-1", "vllm-worker", None)
    assert r["wt"] == datetime(2025, 6, 24, 13, 6, 11, 200000)


def test_stern_keeps_the_pod_and_container_and_reads_the_time_it_prints():
    r = parse_lines(["kimi-k3-0-1 vllm 2026-05-12T11:23:55.8Z ERROR 05-12 11:23:55 [x.py:1] Worker proc died"],
                    kind="vllm", wrappers=("stern",)).row(0, named=True)
    assert (r["w_pod"], r["w_container"], r["w_host"]) == ("kimi-k3-0-1", "vllm", None)
    assert r["wt"] == datetime(2026, 5, 12, 11, 23, 55, 800000)


def test_near_miss_two_words_before_a_line_without_sterns_time_are_not_a_pod():
    r = parse_lines(["kimi-k3-0-1 vllm INFO 05-12 11:23:57 [serve.py:244] Headless worker node exiting"],
                    kind="vllm", wrappers=("stern",)).row(0, named=True)
    assert r["w_pod"] is None


def test_loader_rejects_json_fields_on_a_line_format_or_without_text(tmp_path):
    with pytest.raises(CatalogueError, match="json"):
        _load(tmp_path, '[[wrapper]]\nname = "j"\nregex = "^\\\\{"\njson = { host = "H" }\nsamples = [{ line = "{" }]\n')


def test_a_formats_file_that_is_not_toml_is_a_catalogue_error_with_its_line(tmp_path):
    bad = tmp_path / "formats.toml"
    bad.write_text('[[line]]\nname = "x"\nregex = \n', encoding="utf-8")
    with pytest.raises(CatalogueError) as e:
        load_formats(bad)
    assert "formats: not valid TOML" in str(e.value) and e.value.source.line == 3


# ------------------------------------------------------------------------------------------
# what tells a file's kind ([[sniff]]) is data too, checked on load
# ------------------------------------------------------------------------------------------
def test_every_sniff_regex_the_code_reads_loads_with_its_samples():
    from k3logs.catalogue.formats import SNIFF_LINES, builtin_formats
    sniff = builtin_formats().sniff
    assert set(sniff) == set(SNIFF_LINES)
    assert sniff["vllm_proc"].match("(EngineCore_DP0 pid=412) INFO 08-11 10:00:07 [core.py:77] started")
    assert not sniff["vllm_proc"].match("(pid=412) INFO started")


@pytest.mark.parametrize("change, want", [
    (('samples = ["Traceback (most recent call last):",', 'samples = ["Traceback, most recent last:",'),
     "does not match"),
    (('no_match = ["INFO:     Started server process [1]"]', 'no_match = ["vLLM API server version 0.11.0"]'),
     "matches"),
    (('name = "ray_mark"', 'name = "ray_marks"'), "'ray_mark' is missing"),
])
def test_a_sniff_regex_whose_sample_near_miss_or_name_is_wrong_is_an_issue(tmp_path, change, want):
    from k3logs.catalogue.formats import load_formats
    with pytest.raises(CatalogueError) as e:
        load_formats(broken_pattern_file(tmp_path, "formats.toml", *change))
    assert any(want in str(p) for p in e.value.problems), e.value.problems
