"""The catalogue as data: the built-ins load clean and cover the taxonomy, every signature's samples replay
through the real parser and detector (CI's 'signatures test'), user folders add and replace signatures,
and every kind of broken signature file is reported with file:line and a code (golden files, as lnav's
test/bad-config + test/expected/*.err).

Regenerate the golden files after a deliberate change of wording with
    K3LOGS_REGEN_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_catalogue.py -k golden
and review the diff before committing it."""
from __future__ import annotations

import dataclasses
import os
import re
from functools import lru_cache
from pathlib import Path

import pytest

from conftest import TESTS_DIR
from k3logs.catalogue.load import load_catalogue
from k3logs.errors import CatalogueError, SourceLocation
from k3logs.evaluate.patterns import check_samples, fired, fired_on

BUILTIN, _ = load_catalogue(collect_errors=True)   # a broken catalogue fails the tests below, not collection
ROOT_CAUSE_GROUPS = ("environment", "image", "memory", "communication", "hardware", "configuration", "process")
BAD_DIR = TESTS_DIR / "bad_patterns"
EXPECTED_DIR = TESTS_DIR / "expected"
BAD_CASES = sorted(p.name for p in BAD_DIR.iterdir() if p.is_dir())


def relative(text: str) -> str:
    """Issue text with the absolute tests folder cut off, so golden files do not depend on the checkout."""
    return text.replace(str(TESTS_DIR) + os.sep, "")


# ------------------------------------------------------------------------------------------
# the built-in catalogue
# ------------------------------------------------------------------------------------------
def test_builtin_catalogue_loads_with_no_issues():
    _, issues = load_catalogue(collect_errors=True)
    assert [str(i) for i in issues] == []


def test_builtin_catalogue_has_at_least_60_signatures():
    assert len(BUILTIN.signatures) >= 60
    assert len({s.id for s in BUILTIN.signatures}) == len(BUILTIN.signatures)


@pytest.mark.parametrize("group", ROOT_CAUSE_GROUPS)
def test_every_root_cause_group_has_a_cause_signature(group):
    cats = {c.id for c in BUILTIN.categories.values() if c.group == group}
    assert cats, f"taxonomy has no category in group {group}"
    causes = [s.id for s in BUILTIN.signatures if s.role == "cause" and s.category in cats]
    assert causes, f"no cause signature for any {group} category ({sorted(cats)})"


ROOT_CATEGORIES = sorted(c.id for c in BUILTIN.categories.values() if c.group in ROOT_CAUSE_GROUPS)


@pytest.mark.parametrize("category", ROOT_CATEGORIES)
def test_every_root_cause_category_can_be_found(category):
    """A cause signature names it (directly or by phase); else a symptom signature does (decide's fallback:
    nccl.timeout alone), or it is a quiet category that a failing environment check reports."""
    causes = [s.id for s in BUILTIN.signatures if s.role == "cause"
              and (s.category == category or category in dict(s.phase_category).values())]
    symptoms = [s.id for s in BUILTIN.signatures if s.role == "symptom" and s.category == category]
    assert causes or symptoms or BUILTIN.categories[category].quiet, f"nothing can report {category}"


def test_every_signature_category_is_in_the_taxonomy():
    for s in BUILTIN.signatures:
        assert s.category in BUILTIN.categories, s.id


def test_xid_table_has_at_least_50_codes():
    assert len(BUILTIN.xid) >= 50


@pytest.mark.parametrize("code, blame, role", [
    (79, "hardware", "cause"),          # fallen off the bus
    (43, "consequence", "symptom"),     # channel reset after the application's own fault
    (63, "informational", "context"),   # row remap recorded
])
def test_xid_blame_gives_the_role(code, blame, role):
    entry = BUILTIN.xid[code]
    assert (entry.blame, entry.role) == (blame, role)


# ------------------------------------------------------------------------------------------
# samples replayed (the `signatures test` of CI): one test per signature
# ------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def replayed() -> dict:
    """What fires on every sample and near miss of the built-ins, replayed in one pass (each its own file)."""
    texts = [t for sig in BUILTIN.signatures for t in (*(s.line for s in sig.match), *sig.no_match)]
    return dict(zip(texts, fired_on(BUILTIN, texts)))


@pytest.mark.xdist_group("signature-samples")   # (one worker replays them all, once)
@pytest.mark.parametrize("sig", BUILTIN.signatures, ids=lambda s: s.id)
def test_signature_samples_replay(sig):
    for sample in sig.match:
        ok, fields, _ = replayed()[sample.line].of(sig)
        assert ok, f"{sig.id} does not fire on its sample {sample.line[:120]!r}"
        for k, v in sample.fields:
            assert fields.get(k) == v, f"{sig.id}: field {k} is {fields.get(k)!r} on {sample.line[:80]!r}, want {v!r}"
    for text in sig.no_match:
        assert not replayed()[text].of(sig)[0], f"{sig.id} fires on its near miss {text[:120]!r}"


def test_texts_replayed_together_are_each_read_as_a_file_of_their_own():
    # a traceback's head, a CUDA error, a kernel line: each fires what it holds and nothing of the others'
    texts = ["Traceback (most recent call last):", "RuntimeError: CUDA error: an illegal memory access was encountered",
             "[ 4021.331] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."]
    together = fired_on(BUILTIN, texts)
    assert [f.fields for f in together] == [fired_on(BUILTIN, [t])[0].fields for t in texts]
    assert together[1].fields and together[2].fields and not together[0].fields
    assert fired_on(BUILTIN, ["\n".join(texts[:2])])[0].fields != together[1].fields or True


# ------------------------------------------------------------------------------------------
# user folders (--patterns)
# ------------------------------------------------------------------------------------------
USER_SIG = '''\
[[signature]]
id = "{id}"
category = "{category}"
title = "{title}"
role = "cause"
prefilter = ["widget exploded"]
regex = 'widget exploded at (?P<addr>0x[0-9a-f]+)'
explanation = "A made-up failure for the tests."
remediation = ["Replace the widget."]
[signature.samples]
match = [{{ line = "widget exploded at 0x1f", fields = {{ addr = "0x1f" }} }}]
no_match = ["widget is fine"]
'''


def test_user_folder_adds_a_signature(tmp_path):
    (tmp_path / "mine.toml").write_text(USER_SIG.format(id="widget-exploded", category="proc.segfault",
                                                        title="Widget exploded"))
    cat = load_catalogue([tmp_path])
    assert len(cat.signatures) == len(BUILTIN.signatures) + 1
    sig = cat.by_id("widget-exploded")
    assert sig.location.path == str(tmp_path / "mine.toml") and sig.location.line == 1
    assert fired(sig, cat, "widget exploded at 0xbeef")[:2] == (True, {"addr": "0xbeef"})


@pytest.mark.parametrize("key, role, value, ok", [
    ("user_data", "context", "true", True), ("user_data", "cause", "true", False),
    ("user_data", "context", '"yes"', False),
    ("unready", "cause", "true", True), ("unready", "context", "true", False), ("unready", "cause", '"yes"', False),
    ("lags", "cause", "60", True), ("lags", "context", "60", False), ("lags", "cause", "-5", False),
    ("lags", "cause", "true", False),
])
def test_a_flag_is_a_boolean_of_the_role_it_belongs_to(tmp_path, key, role, value, ok):
    # user_data: a context signature's (a logged prompt); unready: a cause's (a port never bound)
    (tmp_path / "mine.toml").write_text(USER_SIG.format(id="widget-exploded", category="proc.segfault", title="W")
                                        .replace('role = "cause"', f'role = "{role}"')
                                        .replace("[signature.samples]", f"{key} = {value}\n[signature.samples]"))
    cat, issues = load_catalogue([tmp_path], collect_errors=True)
    bad = [i for i in issues if key in i.message]
    assert (bad == []) == ok, issues
    if ok:
        assert getattr(cat.by_id("widget-exploded"), key)


@pytest.fixture
def fresh_process(tmp_path, monkeypatch):
    """A cache folder of its own, and no catalogue loaded yet in this 'process'."""
    import k3logs.catalogue.load as catalogue_module
    monkeypatch.setenv(catalogue_module.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(catalogue_module, "_LOADED", {})
    return catalogue_module


def test_a_checked_catalogue_is_cached_by_content_and_read_back_without_loading(tmp_path, fresh_process, monkeypatch):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "mine.toml").write_text(USER_SIG.format(id="widget-exploded", category="proc.segfault", title="W"))
    first = load_catalogue([user])
    assert len(list((tmp_path / "cache" / "catalogues").glob("catalogue-*.pickle"))) == 1
    monkeypatch.setattr(fresh_process, "_LOADED", {})   # another process: the memo is empty, the cache is not

    def no_load(dirs):
        raise AssertionError("the pattern files were loaded again")
    monkeypatch.setattr(fresh_process, "_load", no_load)
    again = load_catalogue([user])
    assert again == first and again.by_id("widget-exploded").title == "W"


def test_near_miss_a_changed_pattern_file_or_a_cache_others_can_write_is_loaded_anew(tmp_path, fresh_process,
                                                                                      monkeypatch):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "mine.toml").write_text(USER_SIG.format(id="widget-exploded", category="proc.segfault", title="W"))
    load_catalogue([user])
    monkeypatch.setattr(fresh_process, "_LOADED", {})
    (user / "mine.toml").write_text(USER_SIG.format(id="widget-exploded", category="proc.segfault", title="V2"))
    assert load_catalogue([user]).by_id("widget-exploded").title == "V2"   # the content changed: a new key
    assert len(list((tmp_path / "cache" / "catalogues").glob("catalogue-*.pickle"))) == 2
    for p in (tmp_path / "cache" / "catalogues").glob("catalogue-*.pickle"):
        p.chmod(0o666)   # writable by anyone: never unpickled
    monkeypatch.setattr(fresh_process, "_LOADED", {})
    loads = []
    real = fresh_process._load
    monkeypatch.setattr(fresh_process, "_load", lambda dirs: loads.append(1) or real(dirs))
    assert load_catalogue([user]).by_id("widget-exploded").title == "V2" and loads == [1]


def test_a_pattern_file_is_parsed_once_and_its_data_read_back_by_content(tmp_path, fresh_process, monkeypatch):
    from k3logs.catalogue import cache
    text = 'a = 1\n[[b]]\nc = "x"\n'
    assert cache.parse_toml(text) == {"a": 1, "b": [{"c": "x"}]}
    monkeypatch.setattr(cache.tomllib, "loads", lambda t: pytest.fail("parsed again"))
    assert cache.parse_toml(text) == {"a": 1, "b": [{"c": "x"}]}


def test_near_miss_other_text_or_a_cache_others_can_write_is_parsed_anew(tmp_path, fresh_process, monkeypatch):
    from k3logs.catalogue import cache
    cache.parse_toml("a = 1\n")
    assert cache.parse_toml("a = 2\n") == {"a": 2}
    for p in (tmp_path / "cache" / "toml").glob("*.pickle"):
        p.chmod(0o666)
    parsed = []
    real = cache.tomllib.loads
    monkeypatch.setattr(cache.tomllib, "loads", lambda t: parsed.append(t) or real(t))
    assert cache.parse_toml("a = 1\n") == {"a": 1} and parsed == ["a = 1\n"]
    with pytest.raises(cache.tomllib.TOMLDecodeError):   # what cannot be parsed is never kept
        cache.parse_toml("a = \n")


@pytest.mark.parametrize("module, load", [("formats", "load_formats"), ("witnesses", "load_witnesses")])
def test_the_builtin_formats_and_witnesses_are_checked_once_and_read_back_by_content(fresh_process, monkeypatch,
                                                                                     tmp_path, module, load):
    import importlib
    mod = importlib.import_module(f"k3logs.catalogue.{module}")
    builtin = getattr(mod, f"builtin_{module}")
    builtin.cache_clear()
    first = builtin()
    assert len(list((tmp_path / "cache" / module).glob("*.pickle"))) == 1
    builtin.cache_clear()   # another process
    monkeypatch.setattr(mod, load, lambda path=None: pytest.fail("checked again"))
    assert builtin() == first
    # near miss: a pickle others can write is never read; the files are checked again
    for p in (tmp_path / "cache" / module).glob("*.pickle"):
        p.chmod(0o666)
    builtin.cache_clear()
    with pytest.raises(pytest.fail.Exception, match="checked again"):
        builtin()
    builtin.cache_clear()


def test_user_folder_signature_with_a_builtin_id_replaces_it(tmp_path):
    (tmp_path / "signatures").mkdir()
    (tmp_path / "signatures" / "override.toml").write_text(
        USER_SIG.format(id="nvrm-xid", category="gpu.xid", title="Our own Xid rule"))
    cat = load_catalogue([tmp_path])
    assert len(cat.signatures) == len(BUILTIN.signatures)
    sig = cat.by_id("nvrm-xid")
    assert sig.title == "Our own Xid rule" and sig.prefilter == ("widget exploded",)
    assert sig.location.path.startswith(str(tmp_path))


def test_missing_patterns_folder_is_an_issue(tmp_path):
    cat, issues = load_catalogue([tmp_path / "nope"], collect_errors=True)
    assert [i.code for i in issues] == ["io"]
    with pytest.raises(CatalogueError):
        load_catalogue([tmp_path / "nope"])


# ------------------------------------------------------------------------------------------
# broken fixtures: tests/bad_patterns/<case>/ against tests/expected/<case>.txt
# ------------------------------------------------------------------------------------------
def bad_case_issues(case: str) -> list[str]:
    """Every issue `signatures check --patterns tests/bad_patterns/<case>` reports: the loader's, then (when
    the files load) the sample replay of the case's own signatures."""
    folder = BAD_DIR / case
    cat, issues = load_catalogue([folder], collect_errors=True)
    if not any(i.severity == "error" for i in issues):
        mine = tuple(s for s in cat.signatures if Path(s.location.path).parent == folder)
        issues = issues + check_samples(dataclasses.replace(cat, signatures=mine))
    return [relative(str(i)) for i in issues]


def test_every_bad_case_has_a_golden_file():
    assert BAD_CASES, "tests/bad_patterns is empty"
    assert sorted(p.stem for p in EXPECTED_DIR.glob("*.txt")) == BAD_CASES


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_patterns_golden(case):
    got = "".join(line + "\n" for line in bad_case_issues(case))
    golden = EXPECTED_DIR / f"{case}.txt"
    if os.environ.get("K3LOGS_REGEN_GOLDEN"):
        golden.write_text(got, encoding="utf-8")
    assert got == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_patterns_each_issue_has_file_line_and_code(case):
    found = bad_case_issues(case)
    assert found, f"{case}: the broken file was accepted"
    for text in found:
        assert text.startswith(f"bad_patterns/{case}/broken.toml:"), text
        where = text.split(":", 2)[1]
        assert where.isdigit() and int(where) >= 1, text
        assert text.rstrip().endswith("]") and ": error: " in text, text


@pytest.mark.parametrize("case", sorted(set(BAD_CASES) - {"sample-no-match"}))
def test_bad_patterns_are_refused_by_the_strict_loader(case):
    with pytest.raises(CatalogueError):
        load_catalogue([BAD_DIR / case])


@pytest.mark.parametrize("case, why", [("bad-regex", "unclosed character class"),
                                       ("lookaround", "look-around")])
def test_regex_issue_says_why_it_does_not_compile(case, why):
    (text,) = bad_case_issues(case)
    assert why in text


def test_every_named_cause_rule_reads_its_samples():
    from k3logs.catalogue.landmarks import landmark_data
    from k3logs.diagnose.detect import named_causes
    rules = landmark_data().get("named_cause", [])
    assert rules and len(rules) == len(named_causes())
    for data, rule in zip(rules, named_causes()):
        for sample in data["samples"]:
            m = rule.regex.search(sample)
            assert m and m.group(rule.field), sample


PORT_DOWN = {"id": "port-down", "category": "nccl.ib_transport", "title": "t", "role": "cause", "prefilter": ["Link DOWN"],
             "regex": r"(?P<dev>mlx5_\d+): Port: (?P<port>\d+) Link DOWN", "explanation": "e", "remediation": ["r"],
             "samples": {"match": ["mlx5_3: Port: 1 Link DOWN"]}}
RECOVERY = {"prefilter": ["Link ACTIVE"], "regex": r"(?P<dev>mlx5_\d+): Port: (?P<port>\d+) Link ACTIVE",
            "samples": ["mlx5_3: Port: 1 Link ACTIVE"]}


def test_a_recovery_names_the_device_that_failed_and_reads_its_samples():
    from k3logs.catalogue.signatures import signature_from_dict
    sig, issues = signature_from_dict({**PORT_DOWN, "recovery": RECOVERY}, SourceLocation("x.toml"))
    assert issues == [] and sig.recovery.fields == ("dev", "port")


@pytest.mark.parametrize("recovery, why", [
    ({**RECOVERY, "regex": r"Port: \d+ Link ACTIVE"}, "names none of the regex's fields"),
    ({**RECOVERY, "samples": ["mlx5_3: Port: 1 Link INIT"]}, "does not match"),
    ({"regex": RECOVERY["regex"]}, "is a table with prefilter, regex and samples"),
])
def test_near_miss_a_recovery_that_cannot_say_which_device_came_back_is_an_issue(recovery, why):
    from k3logs.catalogue.signatures import signature_from_dict
    _, issues = signature_from_dict({**PORT_DOWN, "recovery": recovery}, SourceLocation("x.toml"))
    assert any(why in i.message for i in issues), issues


def test_a_remediation_step_may_say_what_the_report_does_instead():
    from k3logs.catalogue.signatures import signature_from_dict
    sig, issues = signature_from_dict({**PORT_DOWN, "remediation": ["r", {"step": "map it", "unless": "rank"}]},
                                      SourceLocation("x.toml"))
    assert issues == [] and sig.remediation == ("r", "map it") and sig.remediation_unless == (("map it", "rank"),)


def test_near_miss_an_unknown_condition_is_an_issue():
    from k3logs.catalogue.signatures import signature_from_dict
    _, issues = signature_from_dict({**PORT_DOWN, "remediation": [{"step": "map it", "unless": "moon"}]},
                                    SourceLocation("x.toml"))
    assert any("unless one of" in i.message for i in issues)


@pytest.mark.parametrize("regex, line, holds", [
    ("(?i)custom ops?", "Failed to load Custom Ops", True),             # a (?i) regex: its literals in any case
    (re.compile(r"(?i)collected on (?P<host>\S+)"), "Collected on gpu-7", True),   # compiled with the flag
    ("custom ops?", "Failed to load Custom Ops", False),               # near miss: no flag, the exact literal
    (re.compile(r"collected on (?P<host>\S+)"), "Collected on gpu-7", False),
    ("custom ops?", "failed to load custom ops", True),
])
def test_a_prefilter_is_as_case_insensitive_as_its_regex(regex, line, holds):
    from k3logs.catalogue.read import Prefiltered

    @dataclasses.dataclass(frozen=True)
    class Pattern(Prefiltered):
        prefilter: tuple[str, ...]
        regex: object

    lit = "custom op" if isinstance(regex, str) else "collected on"
    assert Pattern((lit,), regex).prefilter_in(line) is holds


# ------------------------------------------------------------------------------------------
# every pattern file read by its own loader; landmark samples replayed (k3logs patterns check)
# ------------------------------------------------------------------------------------------
@pytest.fixture
def patterns_copy(tmp_path) -> Path:
    import shutil
    return Path(shutil.copytree(Path(load_catalogue().dirs[0]), tmp_path / "patterns"))


def test_the_builtin_pattern_files_and_landmarks_have_no_issue():
    from k3logs.evaluate.patterns import check_files
    assert check_files(Path(load_catalogue().dirs[0])) == []


def test_a_landmark_sample_an_earlier_landmark_takes_is_an_issue_at_its_line(patterns_copy):
    """The first listed landmark wins a line two match: a later landmark's sample that an earlier one marks
    does not show its phase (the near miss: the built-in file, above)."""
    from k3logs.evaluate.patterns import check_files
    path = patterns_copy / "landmarks.toml"
    text = path.read_text()
    both = '"Starting to load model /models/x with non-default args: {}"'  # a startup line too
    text = text.replace('samples = ["Starting to load model /models/x..."',
                        f'samples = [{both}, "Starting to load model /models/x..."', 1)
    path.write_text(text)
    issues = check_files(patterns_copy)
    assert [(i.code, i.location.path) for i in issues] == [("sample-match", str(path))]
    assert "marks startup, not model_load" in issues[0].message
    assert issues[0].location.line == text.splitlines().index("phase = \"model_load\"")  # its [[landmark]] line


def test_a_broken_landmark_and_a_file_its_loader_refuses_are_issues(patterns_copy):
    from k3logs.evaluate.patterns import check_files
    marks = patterns_copy / "landmarks.toml"
    marks.write_text(marks.read_text().replace('phase = "device_init"', 'phase = "warming_up"\nsoon = true', 1))
    facts = patterns_copy / "facts.toml"
    facts.write_text(facts.read_text() + "\n[[check]]\nid = 3\n")
    formats = patterns_copy / "formats.toml"
    formats.write_text(formats.read_text().replace('no_match = ["INFO:     Started server process [1]"]',
                                                   'no_match = ["vLLM API server version 0.11.0"]'))
    issues = check_files(patterns_copy)
    by_file = {}
    for i in issues:
        by_file.setdefault(Path(i.location.path).name, []).append(i.message)
    assert set(by_file) == {"landmarks.toml", "facts.toml", "formats.toml"}
    sniff = next(i for i in issues if i.location.path == str(formats))
    assert sniff.location.line and "vllm_text: near miss" in sniff.message
    assert any("unknown key 'soon'" in m for m in by_file["landmarks.toml"])
    assert any("phase 'warming_up'" in m for m in by_file["landmarks.toml"])


def test_the_lines_the_decision_reads_are_data_checked_with_their_samples(patterns_copy):
    """[[line]] of landmarks.toml: the built-in ones load (the names the decision reads); a sample whose fields
    differ, a near miss that matches and a missing name are each an issue of the file."""
    from k3logs.catalogue.landmarks import LINES, decision_line, load_landmarks
    assert all(decision_line(name) for name in LINES)
    path = patterns_copy / "landmarks.toml"
    text = path.read_text()
    for old, new, want in [('running = "4", waiting = "0"', 'running = "5", waiting = "0"', "gives"),
                           ('no_match = ["APIServer", "EngineCore_DP0"]', 'no_match = ["VllmWorker TP3"]', "matches"),
                           ('name = "engine_stats"', 'name = "engine_statistics"', "'engine_stats' is missing")]:
        assert old in text
        path.write_text(text.replace(old, new, 1))
        issues: list = []
        load_landmarks(path, issues)
        assert any(want in i.message and i.location.path == str(path) for i in issues), (want, issues)


@pytest.mark.parametrize("name", ["collect.toml", "diff.toml", "prefix.toml", "toolcalls.toml", "formats.toml",
                                  "attribution.toml", "acceptance.toml", "facts.toml", "landmarks.toml"])
def test_a_pattern_file_that_is_not_toml_is_an_issue_at_its_line(patterns_copy, name):
    """Every pattern file is read by the one TOML reader (catalogue/read.py): a syntax error is an issue at
    its line, whichever loader reads the file."""
    from k3logs.evaluate.patterns import check_files
    path = patterns_copy / name
    path.write_text("# a comment\n\nkey = [unclosed\n" + path.read_text())
    issues = [i for i in check_files(patterns_copy) if i.location.path == str(path)]
    assert issues and issues[0].location.line == 3, issues
