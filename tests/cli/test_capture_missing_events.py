"""`advisor capture` on a kernel that lacks some of the events the rules want: they are
left out of the command (trace-cmd refuses a whole recording over one missing `-e`),
named on one warning line with the reason, and listed in the JSON. The kernel is a fake
tracefs (WRITEBACK_ADVISOR_TRACEFS): a 6.1 VM without btrfs loaded has every event of
the other systems but no events/btrfs/ at all."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from advisor.capture.recipe import wanted_events
from advisor.rules import load_rules
from tests.helpers import advisor, one_line_error

# Events of the running kernel that no rule records, so the fake lists more than the rules want.
UNRELATED = ("sched:sched_switch", "irq:irq_handler_entry")
LOG_ARGS = """#!/bin/sh
printf '%s\\n' "$@" > "$ARGS_LOG"
"""


def fake_tracefs(root: Path, events: list[str]) -> Path:
    """What `advisor capture` reads of tracefs: available_events, the events/ tree, and the
    files a --run saves and restores."""
    root.mkdir()
    (root / "available_events").write_text("".join(f"{e}\n" for e in events))
    for e in events:
        system, _, name = e.partition(":")
        (root / "events" / system / name).mkdir(parents=True, exist_ok=True)
        (root / "events" / system / name / "filter").write_text("none\n")
    for name, value in (("tracing_on", "1"), ("buffer_size_kb", "1408"), ("set_event", ""), ("trace_clock", "[local] global mono")):
        (root / name).write_text(value + "\n")
    return root


def _recorded(argv: list[str]) -> list[str]:
    return [a for i, a in enumerate(argv) if i and argv[i - 1] == "-e"]


def test_no_btrfs_loaded(tmp_path):
    wanted = wanted_events(load_rules(None, ["all"]))
    btrfs = [e for e in wanted if e.startswith("btrfs:")]
    assert btrfs and len(btrfs) < len(wanted)
    root = fake_tracefs(tmp_path / "tracing", [e for e in wanted if not e.startswith("btrfs:")] + list(UNRELATED))
    env = {"WRITEBACK_ADVISOR_TRACEFS": str(root)}
    r = advisor("capture", "--for", "all", "--device", "/dev/vda", "-o", str(tmp_path / "w.dat"), env=env)
    assert r.code == 0, r.err
    warning = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(warning) == 1, r.err
    assert warning[0].startswith("warning: btrfs not loaded (no events/btrfs/ in tracefs): ")
    assert warning[0].endswith(f"{len(btrfs)} btrfs event{'s' if len(btrfs) > 1 else ''} skipped ({', '.join(btrfs)})")
    line = r.out.strip()
    assert "blktrace -d /dev/vda" in line
    trace_cmd = shlex.split(line[line.index("trace-cmd"):line.index("; wait")])
    assert _recorded(trace_cmd) == [e for e in wanted if not e.startswith("btrfs:")]

    r = advisor("capture", "--for", "all", "--json", env=env)
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["skipped_events"] == btrfs and out["events_checked_against_this_kernel"]
    assert not any(e.startswith("btrfs:") for e in _recorded(out["commands"][0]))


def test_run_never_asks_for_a_missing_event(tmp_path):
    """--run hands the recorder (a stand-in that notes its arguments) only events the kernel has."""
    wanted = wanted_events(load_rules(None, ["all"]))
    missing = next(e for e in wanted if e.startswith("writeback:"))  # one event of a system that is there
    root = fake_tracefs(tmp_path / "tracing", [e for e in wanted if e != missing])
    recorder, log = tmp_path / "record", tmp_path / "args"
    recorder.write_text(LOG_ARGS)
    recorder.chmod(0o755)
    env = {"WRITEBACK_ADVISOR_TRACEFS": str(root), "WRITEBACK_ADVISOR_RECORD": str(recorder), "ARGS_LOG": str(log)}
    r = advisor("capture", "--for", "all", "--run", "--duration", "1", "-o", str(tmp_path / "w.dat"), env=env)
    assert r.code == 0, r.err
    assert f"warning: not in this kernel: 1 writeback event skipped ({missing})" in r.err
    assert _recorded(["-"] + log.read_text().split()) == [e for e in wanted if e != missing]
    # The command it ran, on one line however long (COLUMNS=200 here; it is ~2,000 characters).
    running = next(ln for ln in r.err.splitlines() if ln.startswith("running: "))
    assert _recorded(shlex.split(running)) == [e for e in wanted if e != missing]


def test_kernel_with_none_of_the_events(tmp_path):
    root = fake_tracefs(tmp_path / "tracing", list(UNRELATED))
    r = advisor("capture", "--for", "all", env={"WRITEBACK_ADVISOR_TRACEFS": str(root)})
    assert r.code == 2 and "nothing to record" in r.err and "Traceback" not in r.err
