"""Every command documents itself (a docstring with a '\\b' example block that runs the command) and is
mentioned in README.md (as sqlite-utils' tests/test_docs.py does). The README is written by hand: a command
missing from it fails here until it is documented."""
from __future__ import annotations

import click
import pytest

from conftest import TESTS_DIR
from k3logs.cli import cli

README = TESTS_DIR.parent / "README.md"


def all_commands(group: click.Group = cli, prefix: tuple[str, ...] = ()) -> list[tuple[str, click.Command]]:
    out = []
    for name in sorted(group.commands):
        cmd = group.commands[name]
        path = prefix + (name,)
        out.append((" ".join(path), cmd))
        if isinstance(cmd, click.Group):
            out += all_commands(cmd, path)
    return out


COMMANDS = all_commands()
NAMES = [name for name, _ in COMMANDS]


def test_the_expected_commands_exist():
    assert set(NAMES) >= {"analyze", "sniff", "events", "eval", "signatures", "signatures list", "signatures test",
                          "signatures check", "patterns", "patterns check"}


@pytest.mark.parametrize("name, cmd", COMMANDS, ids=NAMES)
def test_command_has_a_docstring_with_an_example(name, cmd):
    doc = cmd.help or ""
    assert doc.strip(), f"`k3logs {name}` has no help text"
    assert "\b" in doc, f"`k3logs {name}` help has no '\\b' (verbatim) example block"
    example = doc.split("\b", 1)[1]
    assert f"k3logs {name}" in example, f"the example of `k3logs {name}` does not run it"


@pytest.mark.parametrize("name", NAMES)
def test_command_is_mentioned_in_the_readme(name):
    readme = README.read_text(encoding="utf-8")
    assert f"`k3logs {name}" in readme or f"k3logs {name} " in readme, f"README.md does not mention `k3logs {name}`"


def test_group_help_has_an_example():
    assert "\b" in (cli.help or "") and "k3logs analyze" in cli.help
