"""`advisor io`: the btt-style summary, checked against btt on the same capture."""

from __future__ import annotations

import json
import re
import statistics

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error
from tests.parity.blkparse import blkparse, btt_per_device, merged_dump, parse_summary, run_btt

CAPTURES = {
    "blk-ext4-fsync": ["blk-ext4-fsync"],
    "blk-dm-split-remap": ["blk-dm-split-remap.dm-0", "blk-dm-split-remap.vda"],
}

DEV = r"^\s*\(\s*(?P<maj>\d+),\s*(?P<min>\d+)\)\s*\|"
MERGE = re.compile(DEV + r"\s*(?P<q>\d+)\s+(?P<d>\d+)\s+(?P<ratio>[\d.]+)\s*\|\s*(?P<bmin>\d+)\s+(?P<bavg>\d+)\s+(?P<bmax>\d+)\s+(?P<total>\d+)$")
SEEK = re.compile(DEV + r"\s*(?P<n>\d+)\s+(?P<mean>[\d.]+)\s+(?P<median>\d+)\s*\|\s*(?P<mode>\d+)\((?P<count>\d+)\)")


def btt_sections(text: str) -> dict[str, dict[str, re.Match]]:
    """btt's merge and seek tables: {section: {dev: row}}."""
    out: dict[str, dict[str, re.Match]] = {}
    section = None
    for line in text.splitlines():
        if line.startswith("===================="):
            section = line.strip("= ")
            continue
        rx = MERGE if section == "Device Merge Information" else SEEK if section and "Seek" in section else None
        if rx and (m := rx.match(line)):
            out.setdefault(section, {})[f"{m['maj']},{m['min']}"] = m
    return out


def io_json(*inputs: str, extra=()) -> dict:
    r = advisor("io", *(str(SAMPLES / i) for i in inputs), "--json", *extra)
    assert r.code == 0, r.err
    return json.loads(r.out)


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_merges_and_seeks_equal_btt(tmp_path, name):
    s = io_json(*CAPTURES[name])
    btt = btt_sections(run_btt(merged_dump(CAPTURES[name], SAMPLES, tmp_path), tmp_path))
    merges = {r["dev"]: r for r in s["merges"]}
    assert set(merges) == set(btt["Device Merge Information"]) != set()
    for dev, m in btt["Device Merge Information"].items():
        ours = merges[dev]
        assert (ours["q"], ours["d"], ours["blk_min"], ours["blk_max"], ours["blk_total"]) == tuple(
            int(m[k]) for k in ("q", "d", "bmin", "bmax", "total")
        )
        assert f"{ours['ratio']:.1f}" == m["ratio"] and int(ours["blk_avg"]) == int(m["bavg"])
    for ours_key, section in (("q2q", "Device Q2Q Seek Information"), ("d2d", "Device D2D Seek Information")):
        seeks = {r["dev"]: r for r in s["seeks"][ours_key]}
        assert set(seeks) == set(btt[section]) != set()
        for dev, m in btt[section].items():
            ours = seeks[dev]
            assert ours["nseeks"] == int(m["n"]) and f"{ours['mean']:.1f}" == m["mean"]
            assert (ours["mode"], ours["mode_count"]) == (int(m["mode"]), int(m["count"]))


def test_percentiles_and_histogram_follow_the_phase_values(tmp_path):
    s = io_json("blk-ext4-fsync", extra=("--btt-compat",))
    store = tmp_path / "s.duckdb"
    assert advisor("ingest", str(SAMPLES / "blk-ext4-fsync"), "-o", str(store)).code == 0
    with duckdb.connect(str(store), read_only=True) as con:
        d2c = sorted(r[0] for r in con.execute("SELECT ns FROM io_phases WHERE phase = 'D2C'").fetchall())
    row = next(r for r in s["phases"] if r["phase"] == "D2C")
    assert row["n"] == len(d2c) and row["min_ns"] == d2c[0] and row["max_ns"] == d2c[-1]
    q = statistics.quantiles(d2c, n=100, method="inclusive")
    assert row["p50_ns"] == pytest.approx(q[49]) and row["p99_ns"] == pytest.approx(q[98])
    hist = [h for h in s["histogram"] if h["phase"] == "D2C"]
    assert sum(h["n"] for h in hist) == len(d2c)
    edges = [h["le_ms"] for h in hist if h["le_ms"] is not None]
    assert edges == sorted(edges)
    # Everything at or below an edge, and above the previous one.
    below = 0
    for h in hist:
        if h["le_ms"] is not None:
            below += h["n"]
            assert below == sum(1 for v in d2c if v / 1e6 <= h["le_ms"])


def test_completions_add_up_to_blkparse(tmp_path):
    s = io_json("blk-ext4-fsync")
    total = parse_summary(blkparse(["blk-ext4-fsync"], SAMPLES))["blk-ext4-fsync"].sections["Total"]
    completed = total["Reads Completed"][0] + total["Writes Completed"][0]
    assert sum(r["completions"] for r in s["throughput"]) == completed
    written = next(r for r in s["throughput"] if r["direction"] == "write")
    assert written["bytes"] >> 10 == total["Writes Completed"][1][0]


def test_one_device_and_errors():
    s = io_json("blk-dm-split-remap.dm-0", "blk-dm-split-remap.vda", extra=("--device", "254:0"))
    assert s["devices"] == ["254,0"] and {r["dev"] for r in s["phases"]} == {"254,0"}
    line = one_line_error(advisor("io", str(SAMPLES / "blk-ext4-fsync"), "--device", "9,9"))
    assert line.startswith(f"advisor: error: {SAMPLES / 'blk-ext4-fsync'}: no device 9,9") and "254,0" in line
    line = one_line_error(advisor("io", str(SAMPLES / "lost-events-v7-zstd.dat")))
    assert "lost-events-v7-zstd.dat: " in line and "no block layer events" in line and "block:block_rq_issue" in line


def test_tables_for_people():
    r = advisor("io", str(SAMPLES / "blk-ext4-fsync"))
    assert r.code == 0 and r.err == ""
    for title in ("phase latency", "merges, depth and throughput", "seek distance", "latency histogram", "per process"):
        assert title in r.out


def _overhead_devices(text: str) -> set[str]:
    """Devices with a row in btt's Device Overhead table."""
    section, out = None, set()
    for line in text.splitlines():
        if line.startswith("===================="):
            section = line.strip("= ")
        elif section == "Device Overhead" and (m := re.match(DEV, line)):
            out.add(f"{m['maj']},{m['min']}")
    return out


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_btt_compat_equals_btt(tmp_path, name):
    """--btt-compat: every per-device phase table of btt to the printed digit (with btt's
    Q2Qdm/Q2Cdm for majors 9, 253, 254), and its overhead table for the same devices."""
    s = io_json(*CAPTURES[name], extra=("--btt-compat",))
    text = run_btt(merged_dump(CAPTURES[name], SAMPLES, tmp_path), tmp_path)
    theirs = btt_per_device(text)
    btt_remappers = {r["dev"] for r in s["roles"] if r["btt_remapper"]}
    ours = {}
    for r in s["phases"]:
        table = r["phase"] + ("dm" if r["dev"] in btt_remappers and r["phase"] in ("Q2Q", "Q2C", "Q2A") else "")
        ours[(r["dev"], table)] = (f"{r['min_ns'] / 1e9:.9f}", f"{(r['total_ns'] / 1e9) / r['n']:.9f}", f"{r['max_ns'] / 1e9:.9f}", r["n"])
    assert theirs and {k: ours.get(k) for k in theirs} == theirs
    assert {r["dev"] for r in s["overhead"]} == _overhead_devices(text)
    assert all(d["avg_active_at_q"] is None for d in s["depth"] if d["dev"] in btt_remappers)


def test_virtio_disk_measured_as_a_disk(tmp_path):
    """254,0 is the VM's virtio disk: btt takes it for device-mapper (major 254). By default
    it is a disk: D2C for every completed data request, overhead shown, and the output
    says why it differs from btt."""
    s = io_json("blk-ext4-fsync")
    assert s["mode"] == "capture" and s["roles"] == [
        {"dev": "254,0", "role": "disk: issues its own requests (2294 D), 22 splits (X)", "remapper": False, "btt_remapper": True}]
    d2c = next(r for r in s["phases"] if r["phase"] == "D2C")
    completed = next(r for r in s["throughput"] if r["direction"] == "write")["completions"]
    assert d2c["n"] == completed == 1912  # btt: 2,082 values, one per followed bio
    assert [r["dev"] for r in s["overhead"]] == ["254,0"]
    assert 0 < s["overhead"][0]["D2C"] < 100
    assert any("major 254" in n and "--btt-compat" in n for n in s["notes"])
    assert any("D2C per issued request (1,912" in n for n in s["notes"])
    compat = io_json("blk-ext4-fsync", extra=("--btt-compat",))
    assert compat["overhead"] == [] and any("the capture shows it is a disk" in n for n in compat["notes"])
    r = advisor("io", str(SAMPLES / "blk-ext4-fsync"))
    assert "note: 254,0: measured as a disk" in r.out.replace("\n", " ")


def test_dm_recognised_from_its_remap_records():
    s = io_json(*CAPTURES["blk-dm-split-remap"])
    roles = {r["dev"]: r for r in s["roles"]}
    assert roles["253,0"]["remapper"] and roles["253,0"]["role"].startswith("remapper: 424 bios remapped to 254,0")
    assert not roles["254,0"]["remapper"] and "217 splits (X)" in roles["254,0"]["role"]
    assert [r["dev"] for r in s["overhead"]] == ["254,0"]


def test_tracepoints_and_blktrace_of_one_run_agree(tmp_path):
    """blk-ext4-fsync.dat (block_rq_* tracepoints) and blk-ext4-fsync (blktrace) were recorded
    together on the monotonic clock: inside the trace.dat's window the same data requests,
    and the same device times."""
    tp = io_json("blk-ext4-fsync.dat")
    bt = io_json("blk-ext4-fsync")
    assert tp["mode"] == "tracepoints" and tp["devices"] == ["254,0"] and tp["notes"]
    assert tp["merges"] == [] and tp["seeks"] == {"d2d": [], "q2q": []}
    store = tmp_path / "both.duckdb"
    assert advisor("ingest", str(SAMPLES / "blk-ext4-fsync"), str(SAMPLES / "blk-ext4-fsync.dat"), "-o", str(store)).code == 0
    with duckdb.connect(str(store), read_only=True) as con:
        # The window, widened by 1 ms: blktrace stamps a D 1-250 us before the tracepoint fires.
        first, last = con.execute("SELECT min(ts) - 1000000, max(ts) + 1000000 FROM block_rq_issue WHERE nr_sector > 0").fetchone()
        inside, before = con.execute(
            "SELECT count(*) FILTER (WHERE ts BETWEEN ? AND ?), count(*) FILTER (WHERE ts < ?) FROM blk_events"
            " WHERE action = 'D' AND bytes > 0 AND NOT pc", [first, last, first]).fetchone()
    d2c = {s["mode"]: next(r for r in s["phases"] if r["phase"] == "D2C") for s in (tp, bt)}
    assert d2c["tracepoints"]["n"] == inside == 1910 and d2c["capture"]["n"] == inside + before == 1912
    written = {s["mode"]: next(r for r in s["throughput"] if r["direction"] == "write") for s in (tp, bt)}
    assert written["tracepoints"]["completions"] == inside
    # The same requests' device time, seen by two tracers 1-2 us apart.
    for k in ("p50_ns", "p90_ns", "max_ns"):
        assert d2c["tracepoints"][k] == pytest.approx(d2c["capture"][k], rel=0.01)
    i2d = next(r for r in tp["phases"] if r["phase"] == "I2D")
    assert i2d["max_ns"] < 1e6  # no insert of an earlier request on the same sector
