"""The store writes its Parquet files with pyarrow's core writer (advisor/store/parts.py
`open_file`), not pyarrow.parquet.ParquetWriter, whose import loads the cloud
filesystems. Both must write the same bytes: the public writer is the reference."""

from __future__ import annotations

import subprocess
import sys

import pyarrow.parquet as pq

from advisor.store import parts
from tests.conftest import SAMPLES

SAMPLE = "fio-ext4-v7-zstd.dat"


def _row_groups(path):
    f = pq.ParquetFile(path)
    return f.schema_arrow, [f.read_row_group(i) for i in range(f.num_row_groups)]


def test_core_writer_writes_what_pyarrow_parquet_writes(store_of, tmp_path):
    store = store_of(SAMPLE)
    files = sorted(parts.directories(store)[0].glob("*.parquet"))
    assert len(files) > 5
    for original in files:
        schema, groups = _row_groups(original)
        public = tmp_path / f"public-{original.name}"
        w = pq.ParquetWriter(public, schema, **parts._options(schema))
        for g in groups:
            w.write_table(g)
        w.close()
        core = tmp_path / f"core-{original.name}"
        f = parts.open_file(core, schema)
        for g in groups:
            f.writer.write_table(g)
        f.close()
        assert core.read_bytes() == public.read_bytes(), original.name
        # And the store's own file is that file: same encodings, row groups, metadata.
        assert original.read_bytes() == public.read_bytes(), original.name


def test_ingest_does_not_load_the_cloud_filesystems(tmp_path):
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from advisor.store import ingest_trace\n"
        f"ingest_trace(Path({str(SAMPLES / SAMPLE)!r}), Path({str(tmp_path / 's.duckdb')!r}))\n"
        "print(sorted(m for m in ('pyarrow.parquet', 'pyarrow.fs', 'pyarrow._s3fs') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
