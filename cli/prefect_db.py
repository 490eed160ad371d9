"""A fresh Prefect home's database, migrated once per machine (issue 30 item 2: fixed costs paid once).

The command keeps Prefect's state in the data directory (cli/common.py), so a build into a fresh data directory
starts an ephemeral server on an empty SQLite file, and the server's start-up runs every Alembic migration on it:
~15 s of the ~29 s before the real docs' build could run (bench/bench_refresh.py, full corpus), paid again by every
new data directory.  The migrated, still empty database is the same for every home of one Prefect version, so it
is made once (Prefect's own ``create_db``, in a child process with a scratch home) and kept in the user's cache
(``$XDG_CACHE_HOME/trustindex/prefect-db/<prefect version>/prefect.db``); a home without a database gets a copy
before its server starts, and the server's own migration step then finds nothing to do.

Only Prefect's default database (SQLite in ``$PREFECT_HOME``) is seeded: a configured connection url (Postgres,
another file) is the operator's and left alone, as is a home that already has its database.  Nothing of a run is
in the copy: it is made from an empty home, and a server writes only to its own copy.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path

from trustindex.schemas.user_cache import PREFECT_DB, user_cache_dir

DATABASE = "prefect.db"  # Prefect's default SQLite file in $PREFECT_HOME (prefect/settings/models/_defaults.py)
SQLITE = "sqlite+aiosqlite:///"
# the environment names of Prefect's database settings: the scratch home's child uses the default database
DATABASE_SETTINGS = ("PREFECT_API_DATABASE_", "PREFECT_SERVER_DATABASE_")
_CREATE = (
    "import asyncio\n"
    "from prefect.server.database import provide_database_interface\n"
    "asyncio.run(provide_database_interface().create_db())\n"
)


def default_database(home: Path) -> Path | None:
    """``home``'s SQLite file when Prefect's database is its default one there (Prefect fills the setting with
    ``sqlite+aiosqlite:///<home>/prefect.db`` when none is configured), else None (Postgres, another file)."""
    from prefect.settings import get_current_settings

    url = get_current_settings().server.database.connection_url
    value = url.get_secret_value() if url is not None else ""
    target = Path(home) / DATABASE
    return target if value.startswith(SQLITE) and Path(value[len(SQLITE) :]) == target else None


def template(cache: Path) -> Path:
    """The migrated empty database for this Prefect version, made in a child process the first time."""
    import prefect

    made = cache / prefect.__version__ / DATABASE
    if made.is_file():
        return made
    made.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".making-", dir=made.parent) as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith(DATABASE_SETTINGS)}
        env["PREFECT_HOME"] = scratch
        subprocess.run([sys.executable, "-c", _CREATE], env=env, check=True, capture_output=True, timeout=300)
        # one self-contained file (no -wal beside it), then renamed into place: a reader sees all or nothing
        single = Path(scratch) / "single.db"
        copy_database(Path(scratch) / DATABASE, single)
        os.replace(single, made)
    return made


def seed_home(home: Path) -> bool:
    """Give ``home`` the migrated empty database when it has none and Prefect uses its default one; True when a
    copy was placed.  Any failure leaves the home as it was: the server then migrates as it always did."""
    try:
        target = default_database(home)
        if target is None or target.exists():
            return False
        cache = user_cache_dir(PREFECT_DB)
        if cache is None:
            return False
        source = template(cache)
        home.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{DATABASE}.part")
        try:
            copy_database(source, part)
            os.replace(part, target)
        finally:
            part.unlink(missing_ok=True)
        return True
    except (OSError, sqlite3.Error, subprocess.SubprocessError):
        return False


def copy_database(source: Path, dest: Path) -> None:
    """SQLite's online backup: one consistent file, whatever journal the source keeps."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(dest)) as dst:
        src.backup(dst)
