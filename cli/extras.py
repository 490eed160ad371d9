"""Which optional install a command needs, said in one line before the command imports any of it.

The base install (``pip install trustindex``) serves: ``query``, ``policy``, ``snapshots``, ``export``. Building
and inspecting through DuckDB (``refresh``, ``backfill``, ``report``, ``inspect``, ``stats``, ``calibrate``) need
``trustindex[build]``; ``mcp`` needs ``trustindex[serve]``.  What each extra adds is read from the installed
distribution's metadata, so ``pyproject.toml`` stays the one list of it.
"""

from __future__ import annotations

import re
from importlib import metadata

from trustindex.schemas.errors import TrustIndexError

DISTRIBUTION = "trustindex"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")
_SHOWN = 4  # missing distributions named in the message; the rest are counted


def missing(extra: str) -> list[str]:
    """The distributions ``extra`` declares that are not installed (none known when trustindex itself is not
    installed, as when a bare checkout is put on ``sys.path``: then the imports speak for themselves)."""
    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return []
    absent = []
    for requirement in requirements:
        spec, _, marker = requirement.partition(";")
        declared = _EXTRA_MARKER.search(marker)
        name = _NAME.match(spec.strip())
        if declared is None or declared.group(1) != extra or name is None or name.group(0) == DISTRIBUTION:
            continue
        try:
            metadata.distribution(name.group(0))
        except metadata.PackageNotFoundError:
            absent.append(name.group(0))
    return absent


def require(extra: str) -> None:
    """Raise one clear line naming the install to run when ``extra``'s distributions are not all installed."""
    absent = missing(extra)
    if absent:
        named = ", ".join(absent[:_SHOWN]) + (f" and {len(absent) - _SHOWN} more" if len(absent) > _SHOWN else "")
        raise TrustIndexError(f'needs the {extra} install: pip install "trustindex[{extra}]" (missing: {named})')
