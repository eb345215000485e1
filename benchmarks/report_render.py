"""`advisor report` on the largest sample trace (by events): time to write the page,
time for Debian's chromium to load and render it, and its size. Issue 6's targets:
under 5 s, under 10 MB.

    .venv/bin/python benchmarks/report_render.py [--repeat 3] [--trace sample_traces/fio-ext4-v7-zstd.dat]

The store is made once first (`advisor ingest`, cached), so the report's time is the
report's own: analysis with the replay quotes, the incident's series, the charts, the
replay, the page; then chromium headless opens the file (`--dump-dom`) and runs the
page's chart check.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from common import machine, median_run

ROOT = Path(__file__).resolve().parent.parent
ADVISOR = str(ROOT / ".venv" / "bin" / "advisor")
CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=str(ROOT / "sample_traces" / "fio-ext4-v7-zstd.dat"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    subprocess.run([ADVISOR, "ingest", args.trace], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        write_s, write_rss = median_run([ADVISOR, "report", args.trace, "-o", str(page)], args.repeat)
        render_s, render_rss = median_run([*CHROMIUM, page.as_uri()], args.repeat)
        size = page.stat().st_size
    doc = {
        "machine": machine({"chromium": ["chromium", "--version"]}),
        "load_average": os.getloadavg(),
        "repeat": args.repeat,
        "trace": os.path.relpath(args.trace, ROOT),
        "report_write_seconds": round(write_s, 3),
        "report_write_peak_rss_mib": round(write_rss / 1024, 1),
        "chromium_render_seconds": round(render_s, 3),
        "page_bytes": size,
    }
    out = ROOT / "benchmarks" / "results" / "report_render.json"
    out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
