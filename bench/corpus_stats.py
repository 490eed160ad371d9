"""`trustindex stats` figures for the real Midnight docs corpus (shared/corpus/midnight-docs).

The corpus has no history, so it becomes a one-commit git repository in a temp dir; the source is ingested
exactly as a refresh does (no embedding: stats need only the evidence tables), and the stats SQL of
`trustindex stats` runs over the tables.  Usage: python bench/corpus_stats.py [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus" / "midnight-docs"


def corpus_repo(dest: Path) -> Path:
    import git

    shutil.copytree(CORPUS, dest)
    repo = git.Repo.init(dest, initial_branch="main")
    repo.git.add("-A")
    who = git.Actor("Corpus Import", "import@example.org")
    when = datetime(2026, 8, 22, 15, 37, 6, tzinfo=UTC)  # the corpus's source commit date
    repo.index.commit("import midnight-docs", author=who, committer=who, author_date=when, commit_date=when)
    return dest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="also write the figures here")
    a = ap.parse_args()
    import duckdb

    from trustindex.cli.inspect_cmd import stats_from
    from trustindex.encoder.tokens import token_counter
    from trustindex.ingest.source import ingest_source
    from trustindex.schemas.config import Identities, Publisher, Source
    from trustindex.schemas.policy import Policy
    from trustindex.schemas.tables import table_from_rows

    with tempfile.TemporaryDirectory() as tmp:
        repo = corpus_repo(Path(tmp) / "midnight-docs")
        ids = Identities()
        ids.publishers["midnight-foundation"] = Publisher("midnight-foundation", "Midnight Foundation", "foundation")
        src = Source(
            name="midnight-docs",
            url=str(repo),
            ref="main",
            publisher="midnight-foundation",
            include=("**/*.md", "**/*.mdx"),
        )
        t0 = time.perf_counter()
        res = ingest_source(src, Path(tmp) / "data", ids, [], Policy.default(), token_counter())
        seconds = time.perf_counter() - t0
    con = duckdb.connect()
    for name, table in res.tables.items():
        con.register(name, table)
    con.register("sources", table_from_rows("sources", [{"source": "midnight-docs", "status": "ok"}]))
    out = stats_from(con)
    report = res.tables["ingest_report"].to_pydict()
    out["_run"] = {
        "ingest_seconds": round(seconds, 1),
        "files": len(report["path"]),
        "status": {s: report["status"].count(s) for s in set(report["status"])},
    }
    text = json.dumps(out, indent=2, default=str)
    print(text)
    if a.json:
        Path(a.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
