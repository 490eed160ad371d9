"""Canonical pages on the real midnight-docs repository (issue 43 item 2): what the site serves, the URLs hits cite,
the install question through MCP, and a copy of a guide in another source.

    python bench/bench_canonical.py --make-kit DIR --mirrors MIRRORS  # the second repository (an edited guide)
    python bench/bench_canonical.py --data DIR [--no-save]  # the checks, on a refresh of both

``--data``: the data directory of a refresh of two sources: the real midnight-docs repository, complete (its
Docusaurus config and history; ``url`` = its path, ``site_url = "https://docs.midnight.network"``), and the
repository ``--make-kit`` writes: a community starter kit whose ``docs/setup.md`` carries the docs' "Install
Compact" section, lightly edited, committed after it (nothing of it is kept in this project).  Measured here:

- documents by route status, unrouted pages that still get a site URL (goal 0), blog posts citing the site's blog;
- "How do I install the Compact compiler?" through the MCP server (stdio, ``trustindex mcp``): the first hit must
  be a routed page (before: ``docs/tutorials/_beginner/_index.mdx``, a draft folder);
- every in-domain judged query of bench/eval over this snapshot: answers where an unrouted hit ranks above a served
  one (goal 0) and answers query/explain.py cannot reproduce;
- the copy: the copies table, and whether the copy heads a hit of its own on the install questions (goal: never;
  it is folded into the original's hit, ``also_in`` with ``copy_of``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import eval_set  # noqa: E402
from bench.common import ROOT, figure, print_figures, save, setup_env  # noqa: E402

INSTALL = "How do I install the Compact compiler?"
COPY_QUERIES = [INSTALL, "compact-installer.sh install the pre-built binaries and update the shell PATH"]
MIRROR = "midnightntwrk+midnight-docs/repo"  # under --mirrors / TRUSTINDEX_REAL_MIRRORS (repair_mirrors.sh's output)
GUIDE = "docs/getting-started/installation.mdx"


def make_kit(dest: Path, real: Path) -> Path:
    """A community repository whose setup page copies the docs' "Install Compact" section with two small edits."""
    import git

    guide = subprocess.run(["git", "-C", str(real), "show", f"main:{GUIDE}"], capture_output=True, text=True)
    body = guide.stdout.split("## Install Compact", 1)[1].split("## Set up the proof server", 1)[0]
    edited = body.replace(
        "Midnight's dedicated smart contract language", "the dedicated smart contract language of Midnight"
    )
    edited = edited.replace("restart your terminal", "restart the terminal")
    repo = git.Repo.init(dest, initial_branch="main")
    (dest / "docs").mkdir(parents=True, exist_ok=True)
    (dest / "docs" / "setup.md").write_text(
        "# Starter kit setup\n\nWe copied the official steps here so that the kit is self-contained.\n\n"
        + "## Install Compact"
        + edited
        + "\n## Kit scripts\n\nRun `npm run setup` to fetch the kit's contracts.\n"
    )
    (dest / "README.md").write_text("# Night Owls starter kit\n\nA community starter kit for Midnight DApps.\n")
    repo.index.add(["docs/setup.md", "README.md"])
    who, when = git.Actor("Owl", "owl@night-owls.example"), datetime(2026, 10, 1, 12, tzinfo=UTC)
    repo.index.commit("starter kit docs", author=who, committer=who, author_date=when, commit_date=when)
    return dest


def ask_mcp(data: Path, query: str) -> dict:
    """One search through the MCP server over stdio: the compact text and the structured response."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH")}
    env.update({"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "trustindex.cli.main", "mcp", "--data", str(data)], env=env, cwd=str(ROOT)
    )

    async def go() -> dict:
        async with Client(params, read_timeout_seconds=300) as client:
            r = await client.call_tool("search", {"query": query, "k": 5})
            text = "\n".join(c.text for c in r.content if getattr(c, "type", "") == "text")
            return {"text": text, "response": r.structured_content}

    return anyio.run(go)


def route_counts(index) -> dict:
    docs = index.data.docs.table.to_pylist()
    status = Counter("included" if d.get("part_of") else d.get("route") for d in docs)
    unrouted = [d for d in docs if d.get("route") == "unrouted" and not d.get("part_of")]
    blog = [d for d in docs if d["source"] == "midnight-docs" and d["path"].startswith("blog/")]
    return {
        "documents": len(docs),
        "by_status": dict(sorted(status.items())),
        "unrouted_with_site_url": sum(bool(d["page_url"]) for d in unrouted),
        "blog_posts": len(blog),
        "blog_posts_with_blog_url": sum(d["page_url"].startswith("https://docs.midnight.network/blog/") for d in blog),
        "partials_part_of_a_page": sorted(f"{d['path']} -> {d['part_of']}" for d in docs if d.get("part_of")),
    }


def judged_answers(index) -> dict:
    """Every in-domain judged query: answers with an unrouted hit above a served one, answers query/explain.py does
    not reproduce, and nDCG@10 per split (the files a response names, as bench/bench_retrieval.py reads them; the
    corpus copy bench/eval was judged on is this repository without its config, so the paths are the same)."""
    from bench.bench_quality import ndcg_at_10
    from bench.bench_retrieval import SEARCH_K, response_files, unrouted_above_served
    from trustindex.query.explain import check

    queries = [q for q in eval_set.load() if q.in_domain]
    above, unexplained, ndcg = [], [], {}
    for q in queries:
        r = index.search(q.query, k=SEARCH_K)
        if unrouted_above_served(r):
            above.append(q.id)
        if check(r, index.policy):
            unexplained.append(q.id)
        ndcg.setdefault(q.split, []).append(ndcg_at_10(response_files(r), q.relevant))
    means = {split: round(sum(v) / len(v), 4) for split, v in sorted(ndcg.items())}
    return {"queries": len(queries), "unrouted_above_served": above, "unexplained": unexplained, "ndcg": means}


def copy_checks(index) -> dict:
    copies = index.data.copies_table.to_pylist() if index.data.copies_table is not None else []
    out = {"copies": len(copies), "questions": []}
    for q in COPY_QUERIES:
        r = index.search(q, k=10)
        heads = [f"{h['provenance']['source']}/{h['provenance']['path']}" for h in r["hits"]]
        folded = [
            (f"{h['provenance']['source']}/{h['provenance']['path']}", f"{a['source']}/{a['path']}", a["copy_of"])
            for h in r["hits"]
            for a in h["also_in"]
            if a.get("copy_of")
        ]
        copy_hits = [h for h in r["hits"] if h["provenance"].get("copy_of")]
        out["questions"].append({"query": q, "top3": heads[:3], "folded": folded, "copy_hits": len(copy_hits)})
    return out


def run(data: Path) -> dict:
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    index = Index.open(data_dir=data, warm=True)
    mcp = ask_mcp(data, INSTALL)
    top = mcp["response"]["hits"][0]
    judged = judged_answers(index)
    copies = copy_checks(index)
    index.reload_policy(Policy.from_dict({"fusion": {"unrouted_yields": False}}))  # the rule's cost, measured last
    judged["ndcg_without_yield"] = judged_answers(index)["ndcg"]
    return {
        "snapshot_id": index.snapshot_id,
        "routes": route_counts(index),
        "mcp_install": {
            "top": top["provenance"]["path"],
            "route": top["ranking_terms"]["route"]["status"],
            "page_url": top["provenance"]["page_url"],
            "paths": [h["provenance"]["path"] for h in mcp["response"]["hits"]],
            "text_head": mcp["text"][:1500],
        },
        "judged": judged,
        "copy": copies,
    }


def _none_of(name: str, ids: list[str], judged: dict) -> dict:
    """A figure whose goal is that no judged answer is among ``ids``."""
    return figure(name, len(ids), f"of {judged['queries']}", goal="0", met=not ids)


def figures_of(r: dict) -> list[dict]:
    rt, j, c = r["routes"], r["judged"], r["copy"]
    return [
        figure(
            "unrouted pages citing a site URL (real midnight-docs)",
            rt["unrouted_with_site_url"],
            "pages",
            goal="0",
            met=rt["unrouted_with_site_url"] == 0,
        ),
        figure("blog posts citing the site's blog", rt["blog_posts_with_blog_url"], f"of {rt['blog_posts']}"),
        figure(
            "install question through MCP: first hit routed",
            int(r["mcp_install"]["route"] == "routed"),
            "",
            goal="1",
            met=r["mcp_install"]["route"] == "routed",
        ),
        _none_of(
            "judged answers with an unrouted hit above a served one (real repository)", j["unrouted_above_served"], j
        ),
        _none_of("judged answers query/explain.py does not reproduce (real repository)", j["unexplained"], j),
        figure(
            "copy questions where the copy heads a hit",
            sum(q["copy_hits"] > 0 for q in c["questions"]),
            f"of {len(c['questions'])}",
            goal="0",
            met=all(q["copy_hits"] == 0 for q in c["questions"]),
        ),
    ]


def section_of(r: dict) -> list[str]:
    rt, m, c, j = r["routes"], r["mcp_install"], r["copy"], r["judged"]
    partials = rt["partials_part_of_a_page"]
    by_status = ", ".join(f"{k} {v}" for k, v in rt["by_status"].items())
    lines = [
        "## Canonical pages on the real midnight-docs repository (issue 43 item 2)",
        "",
        f"`bench/bench_canonical.py` on snapshot {r['snapshot_id']}: the complete midnight-docs repository (its",
        "Docusaurus config and history, `site_url` https://docs.midnight.network) and a community starter kit written",
        'by the bench that carries an edited copy of the docs\' "Install Compact" section (committed later).',
        "",
        f"- Documents by route: {by_status}. Unrouted pages citing a site URL: {rt['unrouted_with_site_url']} "
        "(before: 45 of the 67 pages under a `_` segment, e.g. `/_develop/tutorial/using/proof-server`).",
        f"- Blog posts citing the site's blog: {rt['blog_posts_with_blog_url']} of {rt['blog_posts']} files under "
        "`blog/` (before: none; the others are `_` drafts).",
        f"- Partials cited at the page that renders them: {len(partials)}"
        + (f", e.g. `{partials[0]}`." if partials else "."),
        f'- "{INSTALL}" through MCP: first hit `{m["top"]}` ({m["route"]}, {m["page_url"]}); the top 5 files: '
        + ", ".join(f"`{p}`" for p in m["paths"])
        + " (before: `docs/tutorials/_beginner/_index.mdx`, a draft folder, first).",
        f"- Every in-domain judged query ({j['queries']}) over this snapshot: answers with an unrouted hit above a "
        f"served one: {len(j['unrouted_above_served'])}; answers query/explain.py does not reproduce: "
        f"{len(j['unexplained'])}. nDCG@10 on this snapshot (files a response names): "
        + ", ".join(f"{k} {v}" for k, v in j["ndcg"].items())
        + "; with `fusion.unrouted_yields = false`: "
        + ", ".join(f"{k} {v}" for k, v in j["ndcg_without_yield"].items())
        + ".",
        f"- Copies across sources found at build: {c['copies']} passages. Per question, the first three hits, the "
        "copies folded into them (hit <- copy) and hits that are a copy:",
    ]
    for q in c["questions"]:
        folded = "; ".join(f"{h} <- {cp}" for h, cp, _orig in q["folded"]) or "none"
        lines.append(f'  - "{q["query"]}": {", ".join(q["top3"])}; folded: {folded}; copy hits: {q["copy_hits"]}')
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path)
    ap.add_argument("--make-kit", type=Path, help="write the starter-kit repository here and stop")
    ap.add_argument(
        "--mirrors",
        type=Path,
        default=os.environ.get("TRUSTINDEX_REAL_MIRRORS"),
        help=f"--make-kit: the folder holding {MIRROR}, complete (default: $TRUSTINDEX_REAL_MIRRORS)",
    )
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    if a.make_kit:
        if a.mirrors is None:
            raise SystemExit("--make-kit needs --mirrors DIR (or TRUSTINDEX_REAL_MIRRORS): repair_mirrors.sh's output")
        print(make_kit(a.make_kit, a.mirrors / MIRROR))
        return 0
    setup_env()
    r = run(a.data)
    figs = figures_of(r)
    print_figures("canonical pages", figs)
    print("\n".join(section_of(r)))
    print(r["mcp_install"]["text_head"])
    if not a.no_save:
        save("canonical_pages", {"figures": figs, "section": section_of(r), **r})
    return 0


if __name__ == "__main__":
    sys.exit(main())
