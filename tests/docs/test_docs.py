"""The documentation runs: every ```sh block of the README and docs/ (as a bash script,
`advisor` being this checkout's CLI), every ```sql block (through `advisor sql` on the
capture its first line names), and a ```text block right after one shows lines that
command really printed. The data contract is regenerated and compared, and the README
fits on two screens."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from advisor.views import contract
from tests.conftest import ROOT
from tests.helpers import command

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# The cache page clears the cache: its blocks run last.
PAGES.sort(key=lambda p: p.name == "cache.md")
BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.S | re.M)
FINDINGS_SQL = "-- findings:"
SQL_CAPTURE = re.compile(r"^--\s*advisor sql (\S+)\s*$", re.M)


def _blocks():
    for page in PAGES:
        found = [(m.group(1), m.group(2)) for m in BLOCK.finditer(page.read_text())]
        for i, (lang, body) in enumerate(found):
            if lang == "sql" and body.startswith(FINDINGS_SQL):
                continue  # a query over a fleet's findings table: tests/fleet runs it on one
            if lang in ("sh", "sql"):
                following = found[i + 1] if i + 1 < len(found) and found[i + 1][0] == "text" else None
                yield pytest.param(lang, body, following[1] if following else None,
                                   id=f"{page.relative_to(ROOT)}:{i}")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A scratch directory that sees the samples and tests/ where the docs expect them,
    and one cache shared by every block (the blocks re-use each other's stores)."""
    d = tmp_path_factory.mktemp("docs")
    for name in ("sample_traces", "tests"):
        (d / name).symlink_to(ROOT / name)
    return d


def _env(workdir) -> dict:
    return {**os.environ, "WRITEBACK_ADVISOR_CACHE": str(workdir / ".cache"), "COLUMNS": "160"}


def _run_sh(body: str, workdir) -> subprocess.CompletedProcess:
    prelude = (f"advisor() {{ {shlex.join(command())} \"$@\"; }}\n"
               f"python() {{ {shlex.quote(sys.executable)} \"$@\"; }}\n"
               "set -e -o pipefail\n")
    lines = []
    for line in body.splitlines():
        if line.startswith("make "):
            # The set-up commands are what CI itself runs; here: the targets exist.
            target = line.split()[1]
            line = f"make -n -C {shlex.quote(str(ROOT))} {target} > /dev/null"
        lines.append(line)
    return subprocess.run(["bash", "-c", prelude + "\n".join(lines)], cwd=workdir, capture_output=True, text=True,
                          env=_env(workdir), timeout=900)


def _squash(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text)


@pytest.mark.parametrize("lang, body, shown", list(_blocks()))
def test_block_runs(lang, body, shown, workdir):
    if lang == "sh":
        p = _run_sh(body, workdir)
    else:
        m = SQL_CAPTURE.search(body)
        assert m, "a ```sql block starts with '-- advisor sql CAPTURE'"
        p = subprocess.run([*command(), "sql", m.group(1)], input=body, cwd=workdir, capture_output=True, text=True,
                           env=_env(workdir), timeout=900)
    assert p.returncode == 0, (body, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr
    if shown is not None and lang in ("sh", "sql"):
        printed = _squash(p.stdout)
        for line in shown.splitlines():
            want = _squash(line.strip()).removesuffix("...").strip()
            if want and not want.startswith("$"):
                assert want in printed, (want, p.stdout[:3000])


def test_data_contract_is_generated_from_the_views():
    page = (ROOT / "docs" / "data-contract.md").read_text()
    assert page == contract.markdown(), "run: python -m advisor.views.contract > docs/data-contract.md"
    from advisor.views import CATALOG

    for view in CATALOG.values():
        for column in view.columns:
            assert f"| `{column.name}` |" in page


def test_readme_fits_on_two_screens_and_links_every_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 100
    for page in PAGES[1:]:
        if page.parent.name in ("docs", "commands"):
            assert str(page.relative_to(ROOT)) in readme or page.name == "README.md", page


def test_every_command_has_a_page():
    from advisor.cli.main import app

    names = {c.name or c.callback.__name__ for c in app.registered_commands} | {g.name if isinstance(g.name, str) else g.typer_instance.info.name for g in app.registered_groups}
    assert names <= {p.stem for p in (ROOT / "docs" / "commands").glob("*.md")}, names
