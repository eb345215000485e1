"""`advisor ingest`: parse the captures of one incident into a store."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from advisor.cli import summary
from advisor.cli.console import JsonFlag, limit_option, out, print_json, warn
from advisor.cli.progress import bytes_progress
from advisor.errors import DamagedCaptureError, UsageError

FORMATS = ("duckdb", "parquet")


def ingest(
    traces: List[Path] = typer.Argument(
        ..., metavar="TRACE...",
        help="The captures of one incident: a trace.dat or ftrace text, and/or blktrace data "
        "(NAME or NAME.blktrace.N per-CPU files, a blkparse -d file, or - for stdin).",
    ),
    output: Optional[Path] = typer.Option(None, "-o", "--output", metavar="PATH", help="Write the store here instead of the cache (with --format parquet: the dataset directory)."),
    fmt: str = typer.Option("duckdb", "--store-format", "--format", "-f", metavar="duckdb|parquet",
                            help="The store's format: duckdb (one file) or parquet (a dataset shared by many captures: DIR/<table>/host=H/capture=C/). "
                                 "--format is the old name (sql's --format is the result's format)."),
    force: bool = typer.Option(False, "--force", help="Re-parse even when a cached store exists; overwrite -o."),
    single_file: bool = typer.Option(
        False, "--single-file",
        help="With -o: every table inside the one DuckDB file (to copy or attach to a bug report as one file; "
        "slower to write, 2-8x the size). By default the tables with rows are Parquet files in PATH.<id>.parts/ beside it.",
    ),
    json_out: JsonFlag = False,
    limit: int = limit_option(25, "event types in the summary"),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when the kernel reported lost events too."),
) -> None:
    """Parse captures into one DuckDB store (cached by content hash).

    Example: advisor ingest trace.dat sda -o incident.duckdb   (sda: the sda.blktrace.N files)

    Example: advisor ingest --store-format parquet -o fleet/ trace.dat
    """
    # DuckDB and Arrow load with the command that uses them, not with the CLI.
    from advisor.store import ingest as ingest_store  # noqa: PLC0415
    from advisor.store import store_for  # noqa: PLC0415
    from advisor.store.cache import check_output, is_store  # noqa: PLC0415

    if fmt not in FORMATS:
        raise UsageError(f"--store-format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt == "parquet" and output is None:
        raise UsageError("--store-format parquet needs -o DIR (the dataset directory)")
    if single_file and (output is None or fmt != "duckdb"):
        raise UsageError("--single-file needs -o PATH (a store outside the cache) and --store-format duckdb")
    if fmt == "parquet" and output.exists() and not output.is_dir():
        raise UsageError(f"{output}: exists and is not a directory")
    for trace in traces:
        if str(trace) != "-" and trace.is_file() and is_store(trace):
            raise UsageError(f"{trace}: is already a store (query it with `advisor sql`)")
    label = traces[0].name if len(traces) == 1 else f"{len(traces)} inputs"
    with bytes_progress(f"ingest {label}") as progress:
        if output and fmt == "duckdb":
            check_output(output, force)
            r = ingest_store(traces, output, progress=progress, single_file=single_file)
        else:
            r = store_for(traces, progress=progress, force=force)
    dataset = _to_parquet(r, output) if fmt == "parquet" else None
    if json_out:
        print_json({**summary.as_dict(r), "parquet": dataset} if dataset else summary.as_dict(r))
    else:
        summary.render(r, limit)
        if dataset:
            out.print(f"parquet: {len(dataset['tables'])} tables of host={dataset['host']} capture={dataset['capture']} "
                      f"under {dataset['directory']}", markup=False, highlight=False)
    if r.damaged:
        # Bad input exits 2, after keeping everything read before the damage.
        raise DamagedCaptureError(summary.damage_error(r))
    if strict and r.data_loss:
        warn("--strict: the kernel lost events during the capture")
        raise typer.Exit(2)


def _to_parquet(r, out_dir: Path) -> dict:
    """The ingested store's tables into the dataset directory (see advisor/store/parquet.py)."""
    from advisor.store import parquet  # noqa: PLC0415
    from advisor.store.cache import open_store  # noqa: PLC0415
    from advisor.store.interrupts import interruptible  # noqa: PLC0415

    with bytes_progress(f"parquet {out_dir}") as progress, open_store(r.store) as con, interruptible(con):
        return parquet.export(con, out_dir, r.digest[:16], progress)
