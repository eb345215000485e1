"""The store's Parquet files, written by the Rust parsers (parsers/src/parts.rs):
the encodings they promise, a row group per parser batch, every row read back,
and no pyarrow.parquet in an ingest."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from advisor.store import parts
from advisor.store_settings import BATCH_ROWS
from tests.conftest import SAMPLES

SAMPLE = "fio-ext4-v7-zstd.dat"
DICTIONARY_INTS = {"cpu", "flags", "preempt_count", "common_flags", "common_preempt_count", "common_cpu"}


def _files(store):
    files = sorted(parts.directories(store)[0].glob("*.parquet"))
    assert len(files) > 5
    return files


def test_integers_are_delta_encoded_the_rest_dictionary_encoded(store_of):
    for path in _files(store_of(SAMPLE)):
        f = pq.ParquetFile(path)
        schema = f.schema_arrow
        for g in range(f.metadata.num_row_groups):
            group = f.metadata.row_group(g)
            for c in range(group.num_columns):
                col = group.column(c)
                field = schema.field(col.path_in_schema.split(".")[0])
                assert col.compression == "LZ4", (path.name, field.name)  # pyarrow names LZ4_RAW "LZ4"
                if pa.types.is_integer(field.type):
                    want = "RLE_DICTIONARY" if field.name in DICTIONARY_INTS else "DELTA_BINARY_PACKED"
                else:
                    want = "RLE_DICTIONARY"
                assert want in col.encodings, (path.name, field.name, col.encodings)


def test_a_row_group_per_batch_and_every_row(store_of):
    import duckdb

    store = store_of(SAMPLE)
    con = duckdb.connect(str(store), read_only=True)
    try:
        views = con.execute(
            "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE sql LIKE '%read_parquet(%'"
        ).fetchall()
        read = {}
        for schema, view, sql in views:
            path = sql.split("read_parquet('", 1)[1].split("')", 1)[0].replace("''", "'")
            read[path] = f'{schema}."{view}"'
        files = _files(store)
        assert sorted(read) == sorted(str(p.resolve()) for p in files)
        for path in files:
            f = pq.ParquetFile(path)
            sizes = [f.metadata.row_group(g).num_rows for g in range(f.metadata.num_row_groups)]
            assert all(0 < n <= BATCH_ROWS for n in sizes), (path.name, sizes)
            rows = con.execute(f"SELECT count(*) FROM {read[str(path.resolve())]}").fetchone()[0]
            assert rows == sum(sizes) == f.read().num_rows, path.name
    finally:
        con.close()


@pytest.mark.parametrize("module", ["pyarrow.parquet", "pyarrow.fs", "pyarrow._s3fs", "pyarrow._parquet"])
def test_ingest_does_not_load_pyarrows_parquet_writer(tmp_path, module):
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from advisor.store import ingest_trace\n"
        f"ingest_trace(Path({str(SAMPLES / SAMPLE)!r}), Path({str(tmp_path / 's.duckdb')!r}))\n"
        f"print({module!r} in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
