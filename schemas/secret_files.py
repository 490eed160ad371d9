"""Files that hold secrets (the export signing key, the serving tier's bearer tokens) and the folders keys go in:
readable by their owner alone.

A secret another local account can read is no secret; the file is still used (refusing would stop a deployment that
mounts it from a secret store with its own modes), and a warning names it, its mode and the fix.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("trustindex.secrets")


def exposed(path: Path) -> str | None:
    """A warning when ``path`` is readable or writable by its group or others (None when it is not, or cannot be
    stat-ed: reading it will then say why)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    if not mode & 0o077:
        return None
    return f"{path}: readable or writable by other accounts (mode {mode:04o}); chmod 600 {path}"


def warn_if_exposed(path: str | Path, what: str) -> str | None:
    """Log ``exposed``'s warning for the ``what`` in ``path``; return it (tests read it)."""
    warning = exposed(Path(path))
    if warning is not None:
        log.warning("%s holds %s but is %s", path, what, warning.split(": ", 1)[1])
    return warning


def private_folder(path: str | Path) -> Path:
    """``path`` as a folder only its owner can enter: created 0700 whatever the umask (its parents as usual)."""
    folder = Path(path)
    if not folder.is_dir():
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir(mode=0o700)
        os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask; set it whatever the umask was
    elif stat.S_IMODE(folder.stat().st_mode) & 0o077:
        log.warning("%s: the key folder is open to other accounts; chmod 700 %s", folder, folder)
    return folder
