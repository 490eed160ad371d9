"""A fresh Prefect home gets the migrated empty database from the user's cache (issue 30 item 2)."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest
from prefect.settings import PREFECT_API_DATABASE_CONNECTION_URL, PREFECT_HOME, temporary_settings

from trustindex.cli.prefect_db import DATABASE, template
from trustindex.cli.prefect_db import seed_home as seed_configured
from trustindex.schemas.user_cache import PREFECT_DB

pytestmark = pytest.mark.slow


def revision(db) -> str:
    with closing(sqlite3.connect(db)) as con:
        return con.execute("select version_num from alembic_version").fetchone()[0]


def tables(db) -> set[str]:
    with closing(sqlite3.connect(db)) as con:
        return {r[0] for r in con.execute("select name from sqlite_master where type = 'table'")}


def seed_home(home) -> bool:
    """seed_home as a command line runs it: Prefect's home there, its default database (the tests' harness
    configures one of its own)."""
    with temporary_settings(updates={PREFECT_HOME: str(home)}, restore_defaults={PREFECT_API_DATABASE_CONNECTION_URL}):
        return seed_configured(home)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The user's cache under tmp_path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "trustindex" / PREFECT_DB


def test_a_fresh_home_gets_the_migrated_database_made_once(cache, tmp_path):
    first, second = tmp_path / "home-1", tmp_path / "home-2"
    assert seed_home(first)  # no template yet: Prefect's own migrations make it, in a child process
    [made] = cache.glob(f"*/{DATABASE}")
    stamp = made.stat().st_mtime_ns
    assert {"flow_run", "task_run", "alembic_version"} <= tables(first / DATABASE)
    assert revision(first / DATABASE) == revision(made)
    assert seed_home(second)  # the next home: a copy, the template untouched
    assert made.stat().st_mtime_ns == stamp and revision(second / DATABASE) == revision(made)
    with closing(sqlite3.connect(first / DATABASE)) as con:  # a copy of its own: writes stay in that home
        con.execute("delete from alembic_version")
        con.commit()
    assert revision(second / DATABASE) == revision(made)
    assert not list(cache.glob("*/.making-*")) and not list(first.glob(".*.part"))


def test_a_home_with_a_database_or_another_database_is_left_alone(cache, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / DATABASE).write_bytes(b"the operator's own")
    assert not seed_home(home)
    assert (home / DATABASE).read_bytes() == b"the operator's own"
    other = tmp_path / "other-home"
    url = f"sqlite+aiosqlite:///{tmp_path}/x.db"
    with temporary_settings(updates={PREFECT_HOME: str(other), PREFECT_API_DATABASE_CONNECTION_URL: url}):
        assert not seed_configured(other)
    assert not (other / DATABASE).exists() and not cache.exists()


def test_a_cache_that_cannot_be_made_leaves_the_home_to_prefect(cache, tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert not seed_home(tmp_path / "home")
    assert not (tmp_path / "home" / DATABASE).exists()


def test_a_template_is_one_self_contained_file(cache):
    made = template(cache)
    assert [p.name for p in made.parent.iterdir()] == [DATABASE]  # no -wal or -shm beside it
    assert revision(made)
