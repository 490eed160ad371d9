"""Incremental refresh: extract only what changed since the last ingested commit.

The files touched by the commits between the previous and the new commit
(``git rev-list old..new``, read from the one ``git log --raw`` pass) are
extracted again; every other document's rows are carried forward with the
new commit.  History that was rewritten (the old commit is no longer an
ancestor), or a changed manifest or docs configuration (they govern other
files' evidence), rebuilds the whole source.  A touched agent-skill or agent-plugin marker (``SKILL.md``,
``.claude-plugin/plugin.json``: extractors/page_kind.py) names the kind of every page in its folder, so that
folder's pages are extracted again too, though their own bytes did not change.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from trustindex.crawl.git import Mirror, commits_between, is_ancestor
from trustindex.crawl.history import CommitInfo
from trustindex.extractors.page_kind import kind_marker_folder
from trustindex.extractors.sphinx_conf import CONF_NAME
from trustindex.extractors.sphinx_routes import READTHEDOCS_RE
from trustindex.ingest.dispatch import kind_of
from trustindex.schemas.config import Source
from trustindex.schemas.tables import PER_DOCUMENT_TABLES
from trustindex.schemas.web_url import file_url


@dataclass
class Previous:
    commit: str
    tables: dict[str, pa.Table]


@dataclass
class Plan:
    carry: set[str]  # paths whose rows (ingested, skipped or failed) are carried forward
    note: str
    ingested: set[str] = field(default_factory=set)  # carried paths that were ingested


def plan(repo: Mirror, previous: Previous | None, commit: str, commits: list[CommitInfo]) -> Plan:
    if previous is None:
        return Plan(set(), "full build")
    if previous.commit == commit:
        touched: set[str] = set()
    elif not is_ancestor(repo, previous.commit, commit):
        return Plan(
            set(), f"history rewritten ({previous.commit[:12]} is no longer an ancestor of {commit[:12]}): full rebuild"
        )
    else:
        new = commits_between(repo, previous.commit, commit)
        touched = {p for c in commits if c.sha in new for p in c.changes}
    if any(kind_of(p) == "config" or posixpath.basename(p) == CONF_NAME or READTHEDOCS_RE.match(p) for p in touched):
        # a Sphinx conf.py names which files are pages and how they are read (extractors/sphinx_conf.py), and a
        # .readthedocs.yaml how they are published (extractors/sphinx_routes.py)
        return Plan(set(), "a manifest or docs configuration changed: full rebuild")
    rep = previous.tables["ingest_report"].to_pydict()
    marked = {f for f in map(kind_marker_folder, touched) if f is not None}
    carry = {p for p in set(rep["path"]) - touched if not any(p.startswith(f) for f in marked)}
    ingested = {p for p, st in zip(rep["path"], rep["status"], strict=True) if st == "ingested" and p in carry}
    return Plan(
        carry,
        f"incremental from {previous.commit[:12]}: {len(touched)} paths touched, {len(carry)} carried forward",
        ingested,
    )


def carried_rows(previous: Previous, carry: set[str], commit: str, source: Source) -> dict[str, list[dict]]:
    """The previous rows of carried paths, restamped with the new commit."""
    t = previous.tables
    docs = t["documents"]
    keep_docs = docs.filter(pc.is_in(docs.column("path"), pa.array(sorted(carry), pa.string())))
    doc_ids = pa.array(sorted(set(keep_docs.column("doc_id").to_pylist())), pa.string())
    out: dict[str, list[dict]] = {}
    for name in PER_DOCUMENT_TABLES:
        tab = t[name]
        out[name] = tab.filter(pc.is_in(tab.column("doc_id"), doc_ids)).to_pylist()
    out["documents"] = []
    for r in keep_docs.to_pylist():
        r["url"] = file_url(source.web_template, source.name, commit, r["path"])
        r["commit"] = commit
        out["documents"].append(r)
    rep = t["ingest_report"]
    out["ingest_report"] = [
        dict(r, commit=commit)
        for r in rep.filter(pc.is_in(rep.column("path"), pa.array(sorted(carry), pa.string()))).to_pylist()
    ]
    return out
