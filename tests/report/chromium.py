"""Debian's chromium, headless, on a file from disk (file:// URL): the DOM after the
page's script ran, and a screenshot. As root chromium needs --no-sandbox."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--allow-file-access-from-files"]


def binary() -> str:
    found = shutil.which("chromium")
    assert found, "chromium is not installed (make install installs Debian's chromium)"
    return found


def dump_dom(page: Path) -> tuple[str, str]:
    """(serialised DOM after load, chromium's stderr)."""
    p = subprocess.run([binary(), *FLAGS, "--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout, p.stderr


def screenshot(page: Path, png: Path, width: int = 1100, height: int = 2600) -> None:
    p = subprocess.run([binary(), *FLAGS, f"--window-size={width},{height}", f"--screenshot={png}", page.resolve().as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and png.exists(), p.stderr[-2000:]
