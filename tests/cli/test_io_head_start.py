"""`advisor io` on blktrace files: the parser's head start before the CLI loads,
and the way back to a store when the capture is past what the summary holds."""

from __future__ import annotations

import json

import pytest

from advisor.cli import head_start
from advisor.cli.main import run
from advisor.io import fast
from tests.conftest import SAMPLES
from tests.helpers import advisor, same

BLK = str(SAMPLES / "blk-ext4-fsync")
DM = [str(SAMPLES / "blk-dm-split-remap.dm-0"), str(SAMPLES / "blk-dm-split-remap.vda")]


@pytest.fixture(autouse=True)
def nothing_started():
    head_start._started = None
    yield
    head_start._started = None


@pytest.mark.parametrize(
    "argv, key",
    [
        (["io", BLK], ((BLK,), None, False)),
        (["io", BLK, "--json", "-n", "5"], ((BLK,), None, False)),
        (["io", *DM, "--device", "254:0", "--btt-compat"], (tuple(DM), "254:0", True)),
        (["io", "--device=254,0", *DM, "--limit=3"], (tuple(DM), "254,0", False)),
    ],
)
def test_plain_io_lines_start_the_parser(argv, key):
    head_start.start(argv)
    assert head_start._started is not None and head_start._started[0] == key
    job = head_start.take(list(key[0]), key[1], key[2])
    assert job is not None and head_start._started is None
    while (done := job.wait(0.05)) is None:
        pass
    assert done["rows"] or done.get("devices") is not None


@pytest.mark.parametrize(
    "argv",
    [
        ["sql", BLK, "select 1"],  # another command
        ["io", "-", "--json"],  # stdin is the command's to read
        ["io", BLK, "--help"],
        ["io", BLK, "--verbose"],  # an option io does not have: Typer's error, not ours
        ["io", BLK, "-d"],  # a value missing
        ["io", str(SAMPLES / "blk-ext4-fsync.dat")],  # a trace.dat: the store answers
        ["io", str(SAMPLES)],  # a directory (an incident)
        ["io", BLK, str(SAMPLES / "blk-ext4-fsync.dat")],
        ["io"],
    ],
)
def test_anything_else_is_left_to_the_command(argv):
    head_start.start(argv)
    assert head_start._started is None


def test_a_job_for_other_arguments_is_not_taken():
    head_start.start(["io", BLK, "--btt-compat"])
    assert head_start.take([BLK], None, False) is None
    assert head_start._started is None  # dropped: asked once


def test_the_command_line_with_a_head_start_answers_as_the_parser_does():
    r = advisor("io", BLK, "--json")
    assert r.code == 0, r.err
    assert json.loads(r.out) == json.loads(json.dumps(fast.blktrace_summary([BLK], None, False)))


def test_past_the_parsers_bound_the_store_answers(monkeypatch, capsys):
    def over(*_args, **_kw):
        return None  # what blktrace_summary says past MAX_HELD_BYTES

    monkeypatch.setattr("advisor.cli.io_cmd.blktrace_summary", over)
    assert run(["io", BLK, "--json"]) == 0
    out = capsys.readouterr()
    assert "more than the summary keeps in memory; reading it into a store instead" in out.err
    # The store's figures: equal, floats to the last bits (DuckDB averages in long double).
    same(json.loads(out.out), json.loads(json.dumps(fast.blktrace_summary([BLK], None, False))))


def test_the_command_takes_the_started_job(monkeypatch, capsys):
    head_start.start(["io", BLK, "--json"])
    assert head_start._started is not None

    def second_read(*_args, **_kw):
        raise AssertionError("the capture was read again")

    monkeypatch.setattr("advisor.parsers.blktrace_io_summary", second_read)
    assert run(["io", BLK, "--json"]) == 0
    assert head_start._started is None
    assert json.loads(capsys.readouterr().out)["devices"] == ["254,0"]
