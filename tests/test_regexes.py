"""Named regexes as data (catalogue/regexes.py): each `[[regex]]` of a pattern file proves itself on load, its
samples matched the way the code applies it, its near misses not, at its file and line when it fails."""
from __future__ import annotations

import re

import polars as pl
import pytest

from k3logs.catalogue.read import ascii_classes
from k3logs.catalogue.regexes import Regexes, load_regexes
from k3logs.errors import CatalogueError

GOOD = """
[[regex]]
name = "port"
why = "a port option"
regex = '--port[= ](?P<port>\\d+)'
samples = ["vllm serve --port 8000", { line = "--port=8001", fields = { port = "8001" } }]
no_match = ["--portal 8000"]
"""


def _load(tmp_path, text: str):
    path = tmp_path / "x.toml"
    path.write_text(text)
    return load_regexes(path)


def _problems(tmp_path, text: str) -> list[str]:
    with pytest.raises(CatalogueError) as e:
        _load(tmp_path, text)
    return [f"{i.location.line}: {i.message}" for i in e.value.problems]


def test_a_regex_whose_samples_hold_loads_compiled_by_name(tmp_path):
    got = _load(tmp_path, GOOD)
    assert got["port"].search("vllm serve --port 8000").group("port") == "8000"


@pytest.mark.parametrize("change, says", [
    (("--port 8000", "--prt 8000"), "does not match"),                 # a sample it misses
    (('"--portal 8000"', '"--port 9"'), "near miss '--port 9' matches"),  # a near miss it takes
    (('port = "8001"', 'port = "8002"'), "gives"),                      # a group that differs
    (('regex = ', 'flags = ["shouty"]\nregex = '), "unknown flag"),
    (('why = ', 'colour = "red"\nwhy = '), "unknown key"),
    (("\\d+)'", "\\d+'"), "does not compile"),
])
def test_each_broken_regex_is_an_issue_at_its_line(tmp_path, change, says):
    problems = _problems(tmp_path, GOOD.replace(*change))
    assert problems and all(p.startswith("2: ") for p in problems) and any(says in p for p in problems), problems


def test_the_samples_are_replayed_the_way_the_code_applies_the_regex(tmp_path):
    whole = GOOD.replace("regex = ", 'use = "fullmatch"\nregex = ')
    assert any("does not match (fullmatch)" in p for p in _problems(tmp_path, whole))   # 'vllm serve --port 8000'


def test_a_name_given_twice_and_a_regex_without_a_sample_are_issues(tmp_path):
    twice = GOOD + GOOD.replace("no_match", "#")
    assert any("defined twice" in p for p in _problems(tmp_path, twice))
    bare = "[[regex]]\nname = 'x'\nregex = 'x'\n"
    assert any("has no sample" in p for p in _problems(tmp_path, bare))


def test_a_regex_polars_also_runs_must_compile_there_and_take_no_flags(tmp_path):
    lookbehind = GOOD.replace("regex = '", "rust = true\nregex = '(?<!x)")   # Python has look-behind, Rust not
    assert any("Rust engine" in p for p in _problems(tmp_path, lookbehind))
    flags = GOOD.replace("regex = ", 'rust = true\nflags = ["ignorecase"]\nregex = ')
    assert any("inline" in p for p in _problems(tmp_path, flags))
    assert _load(tmp_path, GOOD.replace("regex = ", "rust = true\nregex = "))["port"].pattern.startswith("--port")


def test_a_module_names_a_built_in_regex_and_an_unknown_name_says_which_file():
    rx = Regexes("diagnose.toml")
    assert isinstance(rx["host_name"], re.Pattern)
    with pytest.raises(KeyError, match="diagnose.toml has no"):
        rx["no-such-regex"]


@pytest.fixture
def patterns_copy(tmp_path):
    import shutil

    from k3logs.resources import data_dir
    return shutil.copytree(data_dir("patterns"), tmp_path / "patterns")


def test_patterns_check_replays_the_named_regexes_of_every_file_that_has_them(patterns_copy):
    """A built-in file's regexes are compiled when used, not checked on every run: `patterns check` is where a
    sample that no longer matches shows, at its file and line (the near miss: the built-in files pass)."""
    from k3logs.evaluate.patterns import check_files
    assert check_files(patterns_copy) == []
    path = patterns_copy / "diagnose.toml"
    text = path.read_text()
    path.write_text(text.replace('samples = ["SLURM_NTASKS=16"]', 'samples = ["SLURM_NTASK=16"]', 1))
    issues = check_files(patterns_copy)
    assert [(i.code, i.location.path) for i in issues] == [("regex", str(path))]
    assert "SLURM_NTASK=16" in issues[0].message and issues[0].location.line > 1


@pytest.mark.parametrize("written, read", [
    (r"^\d+ \w+\s", r"^[0-9]+ [0-9A-Za-z_]+[\t\n\x0B\f\r ]"),
    (r"[\w./-]+\.py:\d+", r"[0-9A-Za-z_./-]+\.py:[0-9]+"),   # inside brackets: the range itself
    (r"\D\W\S", r"[^0-9][^0-9A-Za-z_][^\t\n\x0B\f\r ]"),
    (r"[^\D]", r"[^\D]"),       # a negated class inside brackets has no plain range: left as written
    (r"\\d \[\d\]", r"\\d \[[0-9]\]"),   # an escaped backslash is no class; escaped brackets open none
    (r"[]\d]", r"[]0-9]"),       # a `]` first in brackets is itself
    (r"[[:alpha:]\s]", r"[[:alpha:]\t\n\x0B\f\r ]"),
])
def test_perl_classes_are_read_as_ascii_classes(written, read):
    assert ascii_classes(written) == read


def test_an_ascii_class_matches_what_a_log_writes_in_both_engines_and_no_other_script():
    rx = ascii_classes(r"^GPU (?P<i>\d+)\s+\w+$")
    assert re.match(rx, "GPU 3 ok")["i"] == "3"
    assert pl.Series(["GPU 3 ok"]).str.extract(rx, 1)[0] == "3"
    assert re.match(r"^GPU (?P<i>\d+)", "GPU \u0663") and not re.match(ascii_classes(r"^GPU (?P<i>\d+)"), "GPU \u0663")


def test_every_regex_value_of_a_pattern_file_is_read_with_ascii_classes(tmp_path):
    rx = _load(tmp_path, GOOD)["port"]
    assert rx.pattern == "--port[= ](?P<port>[0-9]+)"
