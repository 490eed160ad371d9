"""Answer a list of searches over one snapshot and print each response as one line of canonical JSON.

    python tests/kits/response_dump.py CASES_JSON DATA_DIR DAY

Run by tests/query/test_response_identity.py twice, once with the working tree's package and once with a base commit's
first on PYTHONPATH, so this file reads the package only through its public entry point (``Index.open`` and
``search``) and must work with both.  ``DAY`` (YYYY-MM-DD) is the reference day of freshness in both runs:
``reference_day`` is replaced wherever the package bound it, so two runs either side of midnight still agree.
The first line names the package directory that answered (the test checks it is the tree it meant to run).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

# what a response holds that measures the run, not the answer (none today; a field like these is left out)
TIMING_FIELDS = ("took_ms", "elapsed_ms", "timing")


def _fix_reference_day(day: datetime) -> None:
    from trustindex.query import trust

    original = trust.reference_day

    def fixed(now: datetime | None = None) -> datetime:
        return day

    for name, module in list(sys.modules.items()):
        if name.startswith("trustindex.") and getattr(module, "reference_day", None) is original:
            module.reference_day = fixed


def canonical(response) -> str:
    if hasattr(response, "to_json"):
        response = response.to_json()
    for field in TIMING_FIELDS:
        response.pop(field, None)
    return json.dumps(response, sort_keys=True, ensure_ascii=False, allow_nan=False)


def main(cases_file: str, data_dir: str, day: str) -> None:
    import trustindex.query
    import trustindex.query.index as index_module  # every module the search binds, imported before the patch
    from trustindex.query.index import Index
    from trustindex.schemas.errors import TrustIndexError

    _fix_reference_day(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC))
    cases = json.loads(open(cases_file, encoding="utf-8").read())
    out = sys.stdout
    out.write(json.dumps({"package": trustindex.query.__path__[0], "index": index_module.__file__}) + "\n")
    index = Index.open(data_dir=data_dir, warm=True)
    for case in cases:
        try:
            r = index.search(
                case["query"],
                k=case["k"],
                targets=case.get("targets"),
                strict=case.get("strict", False),
                also=case.get("also"),
            )
        except TrustIndexError as e:  # a refused search answers its error: that must not change either
            out.write(json.dumps({"error": type(e).__name__, "message": str(e)}, sort_keys=True) + "\n")
            continue
        out.write(canonical(r) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
