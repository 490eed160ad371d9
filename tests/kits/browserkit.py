"""Debian's headless chromium for the tests that render a page (the HTML report, the search page): where it is,
and the flags it needs on a machine with no network (without the background-networking flags it keeps trying
hosts it cannot reach)."""

from __future__ import annotations

import shutil
from pathlib import Path


def _installed(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)


CHROMIUM = _installed("chromium")
CHROMEDRIVER = _installed("chromedriver")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
