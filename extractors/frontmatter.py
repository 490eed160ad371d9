"""YAML front matter: the ``---`` block at the top of a Markdown/MDX file.

The format is the one Jekyll, Hugo and Docusaurus share: the first line of the
file is exactly ``---``, the YAML follows, and the block ends at the next line
that is ``---`` (or YAML's document-end marker ``...``).  Everything here comes
from repositories other people control, so the parser never raises: malformed
YAML, a block that is not a mapping, an oversized block or a YAML "billion
laughs" alias bomb all give an empty mapping and a warning that names the
problem and its line in the original file.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
from typing import Any

import yaml

# A real front matter block is a few hundred bytes (the Midnight docs: title,
# id, sidebar settings, tags); anything this big is not metadata.
MAX_FRONT_MATTER_BYTES = 64 * 1024
# Bounds on the parsed value.  Aliases let a 1 KB document describe 10^9 nodes
# (billion laughs); PyYAML shares the objects, but converting them would not.
MAX_NODES = 10_000
MAX_DEPTH = 32

_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_OPEN = "---"
_CLOSE = ("---", "...")


class _TooBig(Exception):
    pass


def _first_line_and_rest(text: str) -> tuple[str, int]:
    """The first line (without its newline) and the offset just past it."""
    nl = text.find("\n")
    if nl < 0:
        return text, len(text)
    return text[:nl], nl + 1


def split_front_matter(text: str) -> tuple[dict, int, list[str]]:
    """Split ``text`` into its front matter and the 1-based line where the body starts.

    Returns ``(front_matter, body_start_line, warnings)``.  Without front
    matter the body starts at line 1.  When the block is present but unusable
    (bad YAML, not a mapping, too big) the body still starts after its closing
    ``---`` so the YAML never leaks into chunk text.  An opening ``---`` that is
    never closed is not front matter (CommonMark reads it as a thematic break).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    opened, block = _block(text)
    if block is None:
        return {}, 1, ["front matter opened at line 1 is never closed; read as body text"] if opened else []
    yaml_start, yaml_end, _body, body_line = block
    fm, warnings = _parse_block(text[yaml_start:yaml_end])
    return fm, body_line, warnings


def body_offset(text: str) -> int:
    """The character offset where the body starts: just past a closed front matter block, else 0 (the same block
    split_front_matter reads; a BOM before it counts as part of the block)."""
    start = 1 if text.startswith("\ufeff") else 0
    _opened, block = _block(text[start:])
    return start + block[2] if block else 0


def _block(text: str) -> tuple[bool, tuple[int, int, int, int] | None]:
    """Whether ``text`` opens a front matter block, and where the closed block lies: (YAML start, YAML end, body
    offset, 1-based body line), or None when it is not opened or never closed.  Linear in the file size."""
    first, pos = _first_line_and_rest(text)
    if first.rstrip("\r \t") != _OPEN:
        return False, None
    line_no = 1
    yaml_start = pos
    while pos < len(text):  # the closing delimiter, line by line
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        line_no += 1
        if text[pos:end].rstrip("\r \t") in _CLOSE:
            return True, (yaml_start, pos, min(end + 1, len(text)), line_no + 1)
        pos = end + 1
    return True, None


def _parse_block(block: str) -> tuple[dict, list[str]]:
    if len(block.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
        return {}, [f"front matter at line 1 is larger than {MAX_FRONT_MATTER_BYTES} bytes; ignored"]
    try:
        # libyaml's safe loader when built in: same types as safe_load, ~20x faster.
        value = yaml.load(block, Loader=_SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        # The YAML starts on line 2 of the file; marks are 0-based.
        where = f"line {mark.line + 2}" if mark is not None else "line 1"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return {}, [f"front matter YAML is malformed at {where}: {problem}"]
    except (RecursionError, MemoryError, ValueError, OverflowError) as exc:
        return {}, [f"front matter at line 1 cannot be parsed: {type(exc).__name__}"]
    if value is None:
        return {}, []
    if not isinstance(value, dict):
        return {}, [f"front matter at line 1 is a {type(value).__name__}, not a mapping; ignored"]
    try:
        return _jsonable(value, [0], 0), []
    except _TooBig:
        return {}, [
            f"front matter at line 1 expands to more than {MAX_NODES} values "
            f"or {MAX_DEPTH} levels (YAML aliases?); ignored"
        ]


def _jsonable(value: Any, count: list[int], depth: int) -> Any:
    """Convert YAML values to JSON-serialisable ones (dates become ISO strings)."""
    count[0] += 1
    if count[0] > MAX_NODES or depth > MAX_DEPTH:
        raise _TooBig
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        # NaN/Infinity are not JSON; keep YAML's spelling as text.
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if isinstance(value, bytes):  # !!binary
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else str(_jsonable(k, count, depth + 1))): _jsonable(v, count, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, count, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):  # !!set
        return sorted(str(_jsonable(v, count, depth + 1)) for v in value)
    return str(value)
