"""--version, shell completion, and an example in every command's --help."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

from advisor.cli.main import app
from tests.helpers import advisor

COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands)


def test_version_is_the_package_version():
    r = advisor("--version")
    assert r.code == 0
    assert r.out.strip() == f"advisor (writeback-advisor) {version('writeback-advisor')}"


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_an_example(command):
    r = advisor(command, "--help")
    assert r.code == 0, r.err
    assert re.search(rf"Examples?: advisor {command}\b", " ".join(r.out.split())), r.out


def test_show_completion_prints_a_bash_script():
    r = advisor("--show-completion", "bash")
    assert r.code == 0, r.err
    assert "complete" in r.out and "_ADVISOR_COMPLETE" in r.out


def test_completion_completes_commands_and_options():
    # What bash runs on <TAB> once the script above is installed.
    r = advisor(env={"_ADVISOR_COMPLETE": "complete_bash", "COMP_WORDS": "advisor rep", "COMP_CWORD": "1"})
    assert r.code == 0, r.err
    assert set(r.out.split()) >= {"replay", "report"}
    r = advisor(env={"_ADVISOR_COMPLETE": "complete_bash", "COMP_WORDS": "advisor report --no", "COMP_CWORD": "2"})
    assert "--no-replay" in r.out.split()
