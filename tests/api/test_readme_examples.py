"""The Python examples of docs/python-api.md, run as written (in order, in one namespace,
from the repository root), so the documentation and the API cannot drift apart."""

from __future__ import annotations

import contextlib
import io
import os
import re

from tests.conftest import ROOT

BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def test_readme_examples_run_and_print_what_they_say():
    blocks = BLOCK.findall((ROOT / "docs" / "python-api.md").read_text())
    assert len(blocks) >= 2
    namespace: dict = {}
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out):
            for block in blocks:
                exec(compile(block, "docs/python-api.md", "exec"), namespace)  # noqa: S102 - the page's own code
    finally:
        os.chdir(cwd)
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("uint64")  # global_dirty_state's nr_dirty: an unsigned long in the kernel
    assert "not-affected" in lines
    assert lines[-1] == "True"
    # The replay printed each sync-flusher-stall policy once, exactly one the capture's own kernel's.
    from advisor.analyze.replay import MODELS

    policies = [l.split() for l in lines[-1 - len(MODELS["sync-flusher-stall"].policies):-1]]
    assert sorted(p[0] for p in policies) == sorted(p.id for p in MODELS["sync-flusher-stall"].policies)
    assert [p[1] for p in policies].count("True") == 1


def test_capture_api_errors_are_advisor_errors(tmp_path):
    import pytest

    import advisor
    from advisor.errors import AdvisorError

    with pytest.raises(AdvisorError, match="nope.dat"):
        advisor.open(tmp_path / "nope.dat")
    with advisor.open(ROOT / "sample_traces" / "sync-xfs-v6.dat") as t:
        with pytest.raises(AdvisorError, match="no table"):
            t.table("no_such_table")
        assert t.sql("select 1 as one").to_pylist() == [{"one": 1}]
