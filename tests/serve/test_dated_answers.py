"""Dated answers: every response names when its snapshot was built and, per source, the commit it holds and that
commit's date; list_sources shows the same (issue 18 item 3)."""

from __future__ import annotations

from datetime import UTC, datetime

import git

from trustindex.query.render import render_table
from trustindex.schemas.response import validate_response
from trustindex.serve.mcp_server import list_sources


def git_commit_date(repo_dir, commit: str) -> str:
    c = git.Repo(repo_dir).commit(commit)
    return datetime.fromtimestamp(c.committed_date, UTC).isoformat().replace("+00:00", "Z")


def test_a_response_carries_built_at_and_each_source_commit_and_date(index, demo):
    r = index.search("How do I install the Compact compiler?", k=3)
    validate_response(r)
    assert r["built_at"] == index.data.manifest.created_at
    names = [s["source"] for s in r["sources"]]
    assert names == sorted(index.data.sources) and len(names) == 3
    repos = demo.parent / "repos"
    for s in r["sources"]:
        assert s["commit"] == index.data.sources[s["source"]]["commit"]
        # the committer date of that very commit in the source's repository
        assert s["commit_date"] == git_commit_date(repos / s["source"], s["commit"])
    head = render_table(r).splitlines()[1:3]
    assert f"built {r['built_at'][:10]}" in head[0]
    cited = {h["provenance"]["source"] for h in r["hits"]}
    assert (
        cited
        and all(  # the sources the hits come from, each with its commit and date; the rest counted
            f"{s['source']} @ {s['commit'][:12]} ({s['commit_date'][:10]})" in head[1]
            for s in r["sources"]
            if s["source"] in cited
        )
    )
    if rest := len(r["sources"]) - len(cited):
        assert f"+ {rest} other source" in head[1]


def test_an_abstaining_response_is_dated_too(index):
    r = index.search("zzzz qqqq xxxx", k=3)
    validate_response(r)
    assert r["built_at"] and all(s["commit_date"] for s in r["sources"])


def test_list_sources_shows_built_at_and_commit_dates(index):
    out = list_sources(index.data)
    assert out["built_at"] == index.data.manifest.created_at
    assert all(s["commit_date"] and s["commit_date"].endswith("Z") for s in out["sources"])
