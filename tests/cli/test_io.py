"""`advisor io`: the btt-style summary, checked against btt on the same capture."""

from __future__ import annotations

import json
import re
import statistics

import duckdb
import pytest

from tests.conftest import SAMPLES
from tests.helpers import advisor, one_line_error
from tests.parity.blkparse import merged_dump, parse_summary, blkparse, run_btt

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
    s = io_json("blk-ext4-fsync")
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
    assert "no device 9,9" in line and "254,0" in line
    line = one_line_error(advisor("io", str(SAMPLES / "sync-xfs-v6.dat")))
    assert "no blktrace data" in line


def test_tables_for_people():
    r = advisor("io", str(SAMPLES / "blk-ext4-fsync"))
    assert r.code == 0 and r.err == ""
    for title in ("phase latency", "merges, depth and throughput", "seek distance", "latency histogram", "per process"):
        assert title in r.out
