"""Where each command's output goes, as with git, rg or btt: results on stdout (plain aligned
text when piped, Rich on a terminal, JSON with --json), only progress and warnings on
stderr, and a reader that stops early (`| head -1`) ends the command quietly with exit 0."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, command

SNAPSHOT = str(SAMPLES / "snapshot-seq-btrfs-run1-v7-zstd.dat")
SYNC = str(SAMPLES / "sync-xfs-v6.dat")
BLK = str(SAMPLES / "blk-ext4-fsync")
BOX = re.compile("[│╭╮╰╯─━┃]")

# Each command, and text its results must contain.
COMMANDS = {
    "io": (["io", BLK], ["phase latency", "Q2C", "per process", "jbd2/vda-8"]),
    "analyze": (["analyze", SNAPSHOT], ["btrfs-snapshot-livelock", "BTRFS_IOC_SNAP_CREATE_V2", "snapshot_seconds"]),
    "replay": (["replay", SYNC, "-p", "sync-flusher-stall"], ["sync-flusher-stall", "sync_seconds", "for-sync*"]),
    "ingest": (["ingest", SYNC], ["events per type", "writeback_dirty_folio", "6.18.44"]),
    "sql": (["sql", SYNC, "select event, count(*) as n from events group by 1 order by 2 desc, 1"], ["writeback_dirty_folio"]),
}


def _stderr_is_only_progress_or_warnings(err: str) -> None:
    for line in err.splitlines():
        assert not line.strip() or line.startswith(("warning:", "ingest ", "parquet ")), err


@pytest.mark.parametrize("name", COMMANDS)
def test_results_on_stdout_plain_when_redirected(name, tmp_path):
    args, expected = COMMANDS[name]
    out_file = tmp_path / "out.txt"
    with open(out_file, "w") as f:
        p = subprocess.run([*command(), *args], stdout=f, stderr=subprocess.PIPE, text=True, timeout=600,
                           env={**os.environ, "WRITEBACK_ADVISOR_CACHE": str(tmp_path / "cache")})
    assert p.returncode == 0, p.stderr
    text = out_file.read_text()
    for word in expected:
        assert word in text, (word, text[:2000])
    assert "\x1b[" not in text and not BOX.search(text), text[:2000]  # plain text: no colour, no boxes
    assert all(line == line.rstrip() for line in text.splitlines())
    _stderr_is_only_progress_or_warnings(p.stderr)


@pytest.mark.parametrize("name", ["io", "analyze", "replay", "ingest"])
def test_json_is_the_whole_of_stdout(name):
    args, _ = COMMANDS[name]
    r = advisor(*args, "--json")
    assert r.code == 0, r.err
    assert isinstance(json.loads(r.out), dict)
    _stderr_is_only_progress_or_warnings(r.err)


@pytest.mark.parametrize("args", [
    ["io", BLK],
    ["analyze", SNAPSHOT],
    # Megabytes of CSV: the pipe fills, head exits, and the next write fails (EPIPE).
    ["sql", SNAPSHOT, "select * from events", "--format", "csv"],
])
def test_a_reader_that_stops_early_is_not_an_error(args):
    line = " ".join(f"'{a}'" for a in [*command(), *args])
    p = subprocess.run(["bash", "-c", f"set -o pipefail; {line} | head -1"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) == 1
    assert "Traceback" not in p.stderr and "Broken pipe" not in p.stderr and "BrokenPipe" not in p.stderr, p.stderr


def test_cut_tables_say_how_many_rows_they_left_out():
    total = json.loads(advisor("analyze", SNAPSHOT, "--limit", "3", "-r", "btrfs-delalloc-overflush", "--json").out)
    ev = total["findings"][0]["evidence"][0]
    assert len(ev["rows"]) == 3 and ev["total_rows"] > 3
    r = advisor("analyze", SNAPSHOT, "--limit", "3", "-r", "btrfs-delalloc-overflush")
    assert f"{ev['total_rows'] - 3} more rows (--limit)" in r.out
    r = advisor("sql", SYNC, "select * from events", "--limit", "5")
    assert r.code == 0 and "45,515 more rows (--limit" in r.out
    r = advisor("ingest", SYNC, "--limit", "5")
    assert "16 more rows" in r.out


def _on_a_terminal(*args: str, columns: int = 100) -> str:
    """The command's stdout when stdout is a terminal `columns` wide (a pty)."""
    master, slave = os.openpty()
    os.set_blocking(master, True)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    p = subprocess.Popen([*command(), *args], stdout=slave, stderr=subprocess.DEVNULL, env={**env, "TERM": "xterm"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the pty
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=600)
    os.close(master)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode())


@pytest.mark.parametrize("args, names", [
    (["analyze", SNAPSHOT], ["BTRFS_IOC_SNAP_CREATE_V2", "written_during_snapshot_bytes", "written_dirtied_after_start_bytes",
                             "late_written_fraction", "btrfs-snapshot-livelock"]),
    (["replay", SYNC], ["inodes_written_during_sync", "flusher_waiting_seconds", "stable_writes_required", "wait-if-required"]),
    (["io", BLK], ["kworker/u4:1", "jbd2/vda-8", "max depth R/W", "avg active @Q"]),
])
def test_a_100_column_terminal_shows_whole_names(args, names):
    text = _on_a_terminal(*args)
    assert "╭" in text or "─" in text  # Rich on a terminal
    for name in names:
        assert name in text, name
    assert max(len(l) for l in text.replace("\r", "").splitlines()) <= 100
    assert "…" not in text.replace("… ", "")  # the only ellipsis allowed starts "… N more rows"


def test_help_prints_metavars_not_type_names():
    for cmd in ("io", "ingest", "analyze", "replay", "sql", "report", "capture"):
        r = advisor(cmd, "--help")
        assert r.code == 0
        assert "<bool>" not in r.out and "<list" not in r.out and "<str>" not in r.out and "<path>" not in r.out, r.out
        assert "{" not in r.out.split("Usage:", 1)[1].splitlines()[0], r.out  # TRACE..., not {traces}...
    assert "Usage: advisor sql [OPTIONS] TRACE [QUERY]" in advisor("sql", "--help").out


def test_decoded_values_keep_their_raw_number():
    """The JSON has the ioctl number and its name, the writeback reason and sync mode as
    numbers and as the capture's own print format names them; people read one column."""
    doc = json.loads(advisor("analyze", SNAPSHOT, "-r", "btrfs-snapshot-livelock", "--json").out)
    ev = doc["findings"][0]["evidence"][0]
    row = dict(zip(ev["columns"], ev["rows"][0]))
    assert (row["cmd"], row["cmd_name"]) == (0x50009417, "BTRFS_IOC_SNAP_CREATE_V2")
    assert "BTRFS_IOC_SNAP_CREATE_V2 (0x50009417)" in advisor("analyze", SNAPSHOT, "-r", "btrfs-snapshot-livelock").out
    doc = json.loads(advisor("analyze", SYNC, "-r", "sync-flusher-stall", "--json").out)
    works = next(e for e in doc["findings"][0]["evidence"] if "reason" in e["columns"])
    modes = {(r[works["columns"].index("sync_mode")], r[works["columns"].index("sync_mode_name")]) for r in works["rows"]}
    assert modes == {(0, "WB_SYNC_NONE"), (1, "WB_SYNC_ALL")}
    text = advisor("analyze", SYNC, "-r", "sync-flusher-stall").out
    assert "WB_SYNC_ALL (1)" in text and "sync (2)" in text  # enum wb_reason WB_REASON_SYNC = 2


def test_piped_sql_keeps_each_row_on_one_line(tmp_path):
    """grep and awk read a piped result row by row: a long value is not wrapped to the
    width (COLUMNS=80 here), in a pipe or in the --output file, and no line ends in blanks."""
    query = "select view, lacks from capture_views where view in ('reclaim', 'block_requests') order by view"
    r = advisor("sql", SYNC, query, env={"COLUMNS": "80"})
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert [line.split()[0] for line in lines] == ["view", "block_requests", "reclaim"]
    assert max(len(line) for line in lines) > 80
    out = tmp_path / "rows.txt"
    r = advisor("sql", SYNC, query, "-o", str(out), "--allow-write", str(out), env={"COLUMNS": "80"})
    assert r.code == 0, r.err
    written = out.read_text().splitlines()
    assert written == lines and not any(line.endswith(" ") for line in written)
