"""Recorded measurements name no machine's folders: bench/results.json and the docs rendered from it are tracked
files, read on other machines (a bench records paths under its work folder as ``$TRUSTINDEX_BENCH_WORK/...``)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MACHINE_PATH = re.compile(r"(?<![\w$])/(?:work|home|root|Users)/[\w.+-]+|/tmp/trustindex-bench")


def test_results_and_benchmark_docs_name_no_machine_folder():
    for rel in ("bench/results.json", "docs/benchmarks.md"):
        found = MACHINE_PATH.findall((ROOT / rel).read_text(encoding="utf-8"))
        assert found == [], f"{rel}: {sorted(set(found))[:5]}"
