"""The package layout is the pipeline: each stage's package imports only the shared modules and the stages before
it, nothing imports in a circle, no private name crosses a package, and no module outgrows one reading."""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "k3logs"

# The shared modules every stage may use, then the stages in the order data flows through them. A package may
# import the shared modules and any package of a lower rank; packages of one rank do not know each other.
SHARED = {"errors", "schema", "settings", "window", "resources", "redact", "gate", "progress", "contract", "__init__"}
RANK = {"catalogue": 1, "ingest": 2, "diagnose": 3, "facts": 4, "acceptance": 5, "report": 6, "captures": 7,
        "pipeline": 8, "scan": 9, "diff": 9, "collect": 9, "evaluate": 10, "api": 11, "cli": 12, "__main__": 13}
MAX_LINES = 450


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        out[".".join(("k3logs",) + parts)] = path
    return out


def room(module: str) -> str:
    """The package (or top-level module) a module belongs to: k3logs.diagnose.clock -> diagnose."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def rank(module: str) -> int:
    r = room(module)
    return 0 if r in SHARED else RANK[r]


def imports(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, list[str], int]]:
    """(imported module, names taken, line) for every import of the module, at any depth of the code."""
    is_package = path.name == "__init__.py"
    here = module.split(".") if is_package else module.split(".")[:-1]
    out = []
    for node in _run_time_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name.startswith("k3logs")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("k3logs"):
                continue
            names = [a.name for a in node.names]
            submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in known]
            if submodules:
                out += [(s, [], node.lineno) for s in submodules]
                names = [n for n in names if f"{target}.{n}" not in known]
            if names or not submodules:
                out.append((target, names, node.lineno))
    return out


MODULES = modules()
def _run_time_nodes(tree: ast.AST):
    """Every node but those under `if TYPE_CHECKING:` (names for annotations only: no import at run time)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in ast.walk(child))
            continue
        yield node
        yield from _run_time_nodes(node)


GRAPH = {m: imports(m, p, MODULES) for m, p in MODULES.items()}


def where(module: str) -> str:
    return str(MODULES[module].relative_to(PACKAGE.parent))


def test_every_module_has_a_rank():
    assert {room(m) for m in GRAPH} <= SHARED | set(RANK)


def test_no_import_from_a_later_stage_or_a_sibling_stage():
    wrong = []
    for m, deps in GRAPH.items():
        for target, _, line in deps:
            if target == "k3logs" or room(target) == room(m):
                continue
            if rank(target) > rank(m) or (rank(target) == rank(m) and rank(m) != 0):
                wrong.append(f"{where(m)}:{line} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_no_circle_of_imports():
    edges = {m: {t for t, _, _ in deps if t in GRAPH and t != m} for m, deps in GRAPH.items()}
    state: dict[str, int] = {}
    circles = []

    def visit(m: str, trail: list[str]) -> None:
        state[m] = 1
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                circles.append(" -> ".join(trail[trail.index(t):] + [t]) if t in trail else f"{m} -> {t}")
            elif t not in state:
                visit(t, trail + [t])
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert not circles, "\n".join(circles)


def test_no_private_name_crosses_a_package():
    wrong = [f"{where(m)}:{line} takes {n} from {target}"
             for m, deps in GRAPH.items() for target, names, line in deps
             for n in names if n.startswith("_") and n != "__version__" and room(target) != room(m)]
    assert not wrong, "\n".join(wrong)


# Redaction of what leaves the process is the gate's (k3logs/gate.py): elsewhere, only a piece of bundle text a
# stage cuts into a description of its own is redacted, whole and before the cut (and the rules' loader, to check it)
DERIVING = {"clip", "text", "cut", "load_rules"}


def redaction_used(source: str) -> set[str]:
    """The names of k3logs.redact a module's source uses (imported by name, or as `redact.NAME`)."""
    tree, used, aliases = ast.parse(source), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "redact":
            used |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and any(a.name == "redact" for a in node.names):
            aliases |= {a.asname or a.name for a in node.names if a.name == "redact"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.add(node.attr)
    return used


@pytest.mark.parametrize("source, outside_the_gate", [
    ("from k3logs import redact\nx = redact.obj(report)", {"obj"}),
    ("from k3logs.redact import LineStream", {"LineStream"}),
    ("from k3logs import redact\nx = redact.clip(reason, 60)", set()),   # a description cut from bundle text
    ("from k3logs.gate import release\nx = release(report)", set()),
])
def test_the_gate_rule_itself(source, outside_the_gate):
    assert redaction_used(source) - DERIVING == outside_the_gate


def test_only_the_gate_redacts_what_leaves_the_process():
    wrong = {where(m): sorted(used) for m, p in MODULES.items() if m not in ("k3logs.redact", "k3logs.gate")
             if (used := redaction_used(p.read_text()) - DERIVING)}
    assert not wrong, wrong


def test_no_module_outgrows_one_reading():
    long = {str(p.relative_to(PACKAGE.parent)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, long


@pytest.mark.parametrize("rule, importer, imported, fails", [
    ("later stage", "k3logs.ingest.parse", "k3logs.diagnose.decide", True),
    ("earlier stage", "k3logs.diagnose.decide", "k3logs.ingest.parse", False),
    ("sibling stage", "k3logs.scan.run", "k3logs.diff.compare", True),
    ("shared module", "k3logs.ingest.parse", "k3logs.schema", False),
    ("shared to a stage", "k3logs.schema", "k3logs.ingest.parse", True),
])
def test_the_rank_rule_itself(rule, importer, imported, fails):
    assert (rank(imported) > rank(importer) or (rank(imported) == rank(importer) != 0
            and room(imported) != room(importer))) is fails, rule


# a declared dependency's distribution name -> the module it is imported as
IMPORT_NAME = {"pyyaml": "yaml"}


def test_every_declared_dependency_is_imported():
    declared = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.match(r"[A-Za-z0-9_.-]+", d).group(0).lower() for d in declared}
    imported = {a.name.split(".")[0] for m in GRAPH for node in ast.walk(ast.parse(MODULES[m].read_text()))
                if isinstance(node, ast.Import) for a in node.names}
    imported |= {node.module.split(".")[0] for m in GRAPH for node in ast.walk(ast.parse(MODULES[m].read_text()))
                 if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    unused = {n for n in names if IMPORT_NAME.get(n, n).replace("-", "_") not in imported}
    assert not unused, f"declared in pyproject.toml, imported by no module of k3logs: {sorted(unused)}"


def test_the_readme_shows_the_layout_as_it_is():
    """The README's layout block (after `<!-- layout -->`) has a line for every package and top-level module of
    k3logs, in the order of RANK, and none for one that is gone."""
    readme = (PACKAGE.parent / "README.md").read_text()
    block = readme.split("<!-- layout -->", 1)[1].split("```")[1]
    shown = [line.split()[0].rstrip("/").removesuffix(".py") for line in block.splitlines()[2:] if line.strip()]
    shared = set(block.splitlines()[2].split()[:len(SHARED) - 1])
    rooms = {room(m) for m in GRAPH} - {"__init__", "__main__"}
    assert shared == SHARED - {"__init__"}
    assert set(shown[1:]) | shared == rooms
    assert shown[1:] == sorted(shown[1:], key=RANK.__getitem__)


def test_importing_any_module_runs_no_polars_query_so_a_process_may_fork_after_it():
    """Patterns are loaded (and checked with polars) when first used, never at import: polars' threads started
    by an import deadlock a child forked after it (a process pool, a sweep). Near miss: a query run before the
    fork does hang the child, so the check below can fail."""
    import os
    import signal
    import subprocess
    import sys
    script = ("import importlib, os, polars as pl\n{warm}"
              "for m in {mods!r}:\n    importlib.import_module(m)\n"
              "pid = os.fork()\n"
              "if pid == 0:\n    pl.Series(['a']).str.contains('a').sum(); os._exit(0)\n"
              "os.waitpid(pid, 0)\n")
    mods = sorted(m for m in GRAPH if not m.endswith("__main__"))

    # (polars' own pool size, not the one conftest gives a test worker: with one thread a query leaves no lock held)
    env = {k: v for k, v in os.environ.items() if k != "POLARS_MAX_THREADS"}

    def forks(warm: str, seconds: float) -> bool:
        # (its own session: on a timeout the hung child it forked goes too, not only the script)
        p = subprocess.Popen([sys.executable, "-c", script.format(warm=warm, mods=mods)], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            return p.wait(timeout=seconds) == 0
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return False

    assert forks("", 60)
    assert not forks("pl.Series(['x'] * 100_000).str.contains('x+').sum()\n", 8)


def test_every_name_the_package_exports_resolves():
    """`k3logs.analyze` and the other names of k3logs.__all__ (loaded when first used) are where it says."""
    import k3logs
    for name in k3logs.__all__:
        assert getattr(k3logs, name) is not None, name
