"""The zlib sample is the zstd sample converted by trace-cmd 3.3.4
(`trace-cmd convert --compression zlib`); Debian's trace-cmd cannot read
zlib, so parity is by transitivity: the zstd file matches trace-cmd
(test_tracedat_parity), and every table of the zlib file equals it."""

from __future__ import annotations

import duckdb

from tests.conftest import samples


def _tables(path):
    with duckdb.connect(str(path), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM event_formats ORDER BY 1").fetchall()]
        data = {n: con.execute(f'SELECT * FROM "{n}" ORDER BY 1').fetchall() for n in names}
        data["events"] = con.execute("SELECT * FROM events ORDER BY id").fetchall()
        data["tasks"] = con.execute("SELECT * FROM tasks ORDER BY pid").fetchall()
        info = dict(con.execute("SELECT key, value FROM trace_info").fetchall())
    return data, info



def test_zlib_equals_zstd(store_of):
    zlib = next(m for m in samples("trace.dat") if m["compression"] == "zlib")
    zstd_name = zlib["paired_with"]
    a, ainfo = _tables(store_of(zlib["file"]))
    b, binfo = _tables(store_of(zstd_name))
    assert ainfo["compression"].startswith("zlib") and binfo["compression"].startswith("zstd")
    assert a.keys() == b.keys()
    assert sum(len(v) for v in a.values()) > 90_000
    for name in a:
        assert a[name] == b[name], name
