"""atheris target: Compact pragmas (extractors/pragma.py) and the Compact version grammar (schemas/versions.py).

The first input byte picks a mode, the rest is the payload (UTF-8, invalid bytes replaced):
  0  a whole Compact source                    → extract_pragmas(text, chunk_ordinal)
  1  an expression inside a language pragma    → extract_pragmas("pragma language_version <text>;")
  2  a bare version expression                 → parse_compact(text)

Documented outcomes: extract_pragmas never raises (a bad constraint becomes an ``unparsed``
target with a reason, a tree-sitter error a warning); parse_compact raises only
VersionSyntaxError.  Anything else propagates, and atheris reports it as a crash.

    .venv/bin/python fuzz/fuzz_pragma.py -max_total_time=60 fuzz/corpus/pragma
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from trustindex.extractors.pragma import COMPONENTS, extract_pragmas
    from trustindex.schemas.version_parsers import parse_compact
    from trustindex.schemas.versions import ConstraintSet, VersionSyntaxError


def check_targets(targets, warnings) -> None:
    assert all(isinstance(w, str) and w for w in warnings)
    for t in targets:
        assert t.component in COMPONENTS.values() and t.origin == "pragma", t
        if t.status == "parsed":
            cs = ConstraintSet.from_json(t.intervals)
            assert cs == parse_compact(t.constraint), t  # what was stored is what the text says
        else:
            assert t.status == "unparsed" and t.intervals == "" and t.detail, t


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, text = data[0] % 3, data[1:].decode("utf-8", "replace")
    if mode == 0:
        check_targets(*extract_pragmas(text, chunk_ordinal=data[0] % 5 or None))
    elif mode == 1:
        check_targets(*extract_pragmas(f"pragma language_version {text};\n"))
    else:
        try:
            cs = parse_compact(text)
        except VersionSyntaxError as exc:
            assert exc.reason
            return
        assert ConstraintSet.from_json(cs.to_json()) == cs


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
