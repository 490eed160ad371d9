"""Reading an operator file that is one array of tables (``[[component]]``, ``[[compiler]]``): the TOML parse and
the top-level checks, each failure one ConfigError naming the file and the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

from trustindex.schemas.errors import ConfigError


def read_table_array(file: Path, key: str) -> list:
    """The ``[[key]]`` tables of ``file`` (an empty list when it has none); anything else at the top level is an
    error, as is TOML that does not parse."""
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(str(file), None, f"not valid TOML: {e}") from None
    for k in data:
        if k != key:
            raise ConfigError(str(file), k, f"unknown key (known: {key})")
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise ConfigError(str(file), key, f"expected [[{key}]] tables")
    return raw
