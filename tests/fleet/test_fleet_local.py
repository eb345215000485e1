"""advisor fleet analyze with the local engine: the findings table, the summary, inputs."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from advisor.fleet import expand
from advisor.rules import load_rules
from tests.conftest import SAMPLES
from tests.fleet.conftest import CAPTURES, NOT_A_CAPTURE, docs_query
from tests.helpers import advisor, one_line_error


def test_one_row_per_capture_and_rule(local_fleet):
    table, doc = local_fleet
    rules = load_rules()
    t = pq.read_table(table)
    assert doc["captures"] == len(CAPTURES) + 1 and doc["engine"] == "local"
    assert t.num_rows == (len(CAPTURES) + 1) * len(rules)
    rows = t.to_pylist()
    # Captures under the working directory are named relative to it, as given otherwise.
    assert {(Path(r["capture"]).name, r["rule"]) for r in rows} == {(c, r.id) for c in [*CAPTURES, NOT_A_CAPTURE] for r in rules}
    # Every metric of every rule is a column.
    assert {m.name for r in rules for m in r.metrics} <= set(t.column_names)


def test_rows_carry_the_analysis(local_fleet):
    table, _ = local_fleet
    with duckdb.connect() as con:
        row = con.execute(f"""SELECT host, kernel, verdict, write_stall_count, capture_id FROM read_parquet('{table}/*.parquet')
                             WHERE capture LIKE '%stable-pages-ext4-v7-zstd.dat' AND rule = 'stable-page-wait'""").fetchone()
        analyzed = advisor("analyze", str(SAMPLES / "stable-pages-ext4-v7-zstd.dat"), "--json", "--rule", "stable-page-wait")
        import json
        finding = json.loads(analyzed.out)["findings"][0]
        assert row[:4] == ("vm", "6.18.44-fc-v669", finding["verdict"], finding["metrics"]["write_stall_count"])
        assert len(row[4]) == 16
        # A replay quoted by a finding: before and after of its metric.
        replayed = con.execute(f"""SELECT count(*) FROM read_parquet('{table}/*.parquet')
                                  WHERE replay_metric IS NOT NULL AND replay_before IS NOT NULL AND replay_after IS NOT NULL""").fetchone()[0]
        assert replayed >= 1


def test_a_file_that_is_not_a_capture_is_an_error_row_not_a_failure(local_fleet):
    table, doc = local_fleet
    assert [Path(e["capture"]).name for e in doc["errors"]] == [NOT_A_CAPTURE]
    assert "not a recognised trace file" in doc["errors"][0]["error"]


def test_summary_verdicts_by_kernel_and_worst_hosts(local_fleet):
    _, doc = local_fleet
    kernels = {r["kernel"] for r in doc["verdicts_by_kernel"]}
    assert {"6.18.44-fc-v669", "6.1.0-56-amd64"} <= kernels
    worst = {(r["rule"], r["host"]) for r in doc["worst_hosts"]}
    assert ("stable-page-wait", "vm") in worst
    assert all(r["verdict"] in ("affected", "at-risk", "signature-without-known-bug") for r in doc["worst_hosts"])


def test_docs_query_runs(local_fleet):
    table, _ = local_fleet
    with duckdb.connect() as con:
        rows = con.execute(docs_query(table)).fetchall()
    assert rows and all(r[4] > 0 for r in rows)
    assert any(r[1].endswith("stable-pages-ext4-v7-zstd.dat") for r in rows)


def test_inputs_globs_and_list_files(tmp_path, monkeypatch):
    monkeypatch.chdir(SAMPLES)
    (tmp_path / "list.txt").write_text(f"# comment\n\n{SAMPLES}/sync-xfs-v6.dat\n{SAMPLES}/dbench-stable*-run1-v7-zstd.dat\n")
    got = expand([f"@{tmp_path / 'list.txt'}", "sync-xfs-v6.dat", "fio-ext4-*.dat"])
    assert [str(p) for p in got] == ["sync-xfs-v6.dat", "dbench-stable0-ext4-run1-v7-zstd.dat", "dbench-stable1-ext4-run1-v7-zstd.dat",
                                     "fio-ext4-v7-zstd.dat"]


@pytest.mark.parametrize("args", [["no-such-*.dat"], ["@/nonexistent/list.txt"], ["/nonexistent.dat"]])
def test_bad_inputs_are_one_line(tmp_path, args):
    one_line_error(advisor("fleet", "analyze", *args, "-o", str(tmp_path / "out")))


def test_unknown_engine_is_one_line(tmp_path):
    one_line_error(advisor("fleet", "analyze", str(SAMPLES / "sync-xfs-v6.dat"), "-o", str(tmp_path), "--engine", "dask"))


def test_help_has_an_example():
    r = advisor("fleet", "analyze", "--help")
    assert r.code == 0, r.err
    assert "Example: advisor fleet analyze" in " ".join(r.out.split())
