"""Judged questions over the organisation's snapshot: where the official reference or guide ranks, and where the
files written for AI agents rank against it (issue 29, "Done when").

    python bench/bench_org_questions.py --data DIR --label before|after [--k 20] [--no-save]

``--data``: the data directory of an org refresh (bench/bench_org_refresh.py leaves its bounded one under
``--work``, default $TRUSTINDEX_BENCH_WORK/org-refresh/data-bounded).  ``--label``: "before" (main's ranking,
without page kinds) or "after" (with them); each run is kept under its label, so the two sit side by side.

bench/eval/org_questions.jsonl: ten questions, each with its official pages as ``<source>:<path>`` and a grade
(2: the reference or guide that answers it, 1: a page that partly does).  Agent-instruction files are recognised
here by path alone, on purpose independent of the index's own page kinds: AGENTS.md, CLAUDE.md, SKILL.md, any file
under .claude/, .codex/, .cursor/ or a skills/ folder, and every file of the midnight-expert plugin repository.

Per question: the rank (1-based, over the hits) of the first official page and of the first grade-2 page, the
ranks of agent files in the top k, and how many rank above the first official page.  Then, over the whole
snapshot (every document and every passage, not the hits only): how many lack a ``url``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import ROOT, WORK, figure, print_figures, save, setup_env  # noqa: E402

QUESTIONS = ROOT / "bench" / "eval" / "org_questions.jsonl"
DEFAULT_DATA = WORK / "org-refresh" / "data-bounded"
AGENT_FILES = {"agents.md", "claude.md", "skill.md"}
AGENT_DIRS = {".claude", ".codex", ".cursor", "skills"}
AGENT_SOURCES = {"midnight-expert"}  # a repository of agent plugins: skills, prompts, commands


def is_agent_file(source: str, path: str) -> bool:
    p = PurePosixPath(path)
    return source in AGENT_SOURCES or p.name.lower() in AGENT_FILES or bool(AGENT_DIRS & set(p.parts[:-1]))


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        q = json.loads(line)
        if not q.get("query") or not isinstance(q.get("official"), dict) or not q["official"]:
            raise SystemExit(f"{path}:{n}: each line needs a query and its official pages")
        out.append(q)
    return out


def judge(question: dict, hits: list[dict]) -> dict:
    """Where the official pages and the agent files rank among ``hits`` (in rank order)."""
    official = question["official"]
    ranked = []
    for rank, h in enumerate(hits, 1):
        prov = h["provenance"]
        key = f"{prov['source']}:{prov['path']}"
        ranked.append(
            {
                "rank": rank,
                "page": key,
                "grade": official.get(key, 0),
                "agent": is_agent_file(prov["source"], prov["path"]),
                "page_kind": h.get("page_kind") or prov.get("page_kind"),
                "url": prov.get("url"),
            }
        )
    first = next((r["rank"] for r in ranked if r["grade"]), None)
    first2 = next((r["rank"] for r in ranked if r["grade"] == 2), None)
    agents = [r["rank"] for r in ranked if r["agent"]]
    return {
        "id": question["id"],
        "query": question["query"],
        "first_official": first,
        "first_grade2": first2,
        "agent_ranks": agents,
        "agents_above_official": sum(1 for a in agents if first is None or a < first),
        "official_first": first == 1,
        "hits_without_url": sum(1 for r in ranked if not r["url"]),
        "top5": [f"{r['page']}{' [agent]' if r['agent'] else ''}" for r in ranked[:5]],
    }


def snapshot_urls(index) -> dict:
    """Every passage of the snapshot cited as a hit would be (query.response.provenance), not the hits only: how
    many documents and passages would have no ``url``."""
    from trustindex.query.response import provenance

    d = index.data
    without = [i for i in range(len(d.chunk_doc)) if not provenance(d, i).url]
    urls = d.docs.table.column("url").to_pylist()
    return {
        "documents": len(urls),
        "documents_without_url": sum(1 for u in urls if not u),
        "passages": len(d.chunk_doc),
        "passages_without_url": len(without),
        "example_without_url": provenance(d, without[0]).path if without else None,
    }


def run(data: Path, k: int, policy: Path | None = None) -> dict:
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    index = Index.open(data_dir=data, policy=Policy.load(policy) if policy else None)
    questions = load_questions()
    judged = [judge(q, index.search(q["query"], k=k)["hits"]) for q in questions]
    return {
        "snapshot_id": index.snapshot_id,
        "k": k,
        "questions": judged,
        "official_first": sum(j["official_first"] for j in judged),
        "no_agent_above_official": sum(bool(j["first_official"]) and not j["agents_above_official"] for j in judged),
        "urls": snapshot_urls(index),
    }


def section(runs: dict) -> list[str]:
    lines = [
        "## Judged questions over the organisation (issue 29)",
        "",
        "`bench/bench_org_questions.py --data DIR --label before|after` over the org refresh's snapshot "
        "(bench/bench_org_refresh.py); questions and their official pages in bench/eval/org_questions.jsonl. "
        "Per question: rank of the first official page (reference or guide) and of the agent-instruction files "
        "(AGENTS.md, CLAUDE.md, SKILL.md, .claude/, .codex/, skills/, the midnight-expert plugins) in the top k hits.",
        "",
        "| question | " + " | ".join(f"{lb}: official rank | {lb}: agent files above it" for lb in runs) + " |",
        "|---|" + "---|---|" * len(runs),
    ]
    ids = [q["id"] for q in next(iter(runs.values()))["questions"]]
    for i, qid in enumerate(ids):
        cells = []
        for r in runs.values():
            q = r["questions"][i]
            cells += [str(q["first_official"] or f"> {r['k']}"), str(q["agents_above_official"])]
        lines.append(f"| {qid}: {runs[next(iter(runs))]['questions'][i]['query']} | " + " | ".join(cells) + " |")
    lines.append("")
    for label, r in runs.items():
        u = r["urls"]
        lines.append(
            f"- {label} (snapshot {r['snapshot_id']}, policy {r.get('policy', 'default')}): official first in "
            f"{r['official_first']}/{len(ids)}, no agent "
            f"file above the official page in {r['no_agent_above_official']}/{len(ids)}; documents without url "
            f"{u['documents_without_url']} of {u['documents']:,}, passages without url {u['passages_without_url']} "
            f"of {u['passages']:,}."
        )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--label", default="before")
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument(
        "--policy",
        type=Path,
        help="a policy file (e.g. every [page_kind] weight 1.0 for a 'before' on the same snapshot)",
    )
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    setup_env()
    res = run(a.data, a.k, a.policy)
    res["policy"] = str(a.policy.name) if a.policy else "default"
    for q in res["questions"]:
        print(
            f"{q['id']} official #{q['first_official']} (grade 2 #{q['first_grade2']}), agent files at "
            f"{q['agent_ranks']} ({q['agents_above_official']} above): {q['query']}"
        )
        for line in q["top5"]:
            print(f"    {line}")
    print(json.dumps({k: v for k, v in res.items() if k != "questions"}, indent=2))
    if a.no_save:
        return
    results = json.loads((ROOT / "bench" / "results.json").read_text())
    runs = {**results.get("org_questions", {}).get("runs", {}), a.label: res}
    n = len(res["questions"])
    figures = [
        figure(f"org questions: official page first ({label})", r["official_first"], f"of {n}", goal=f"{n}", met=None)
        for label, r in runs.items()
    ] + [
        figure(
            f"org questions: no agent file above the official page ({label})",
            r["no_agent_above_official"],
            f"of {n}",
            goal=f"{n}",
            met=r["no_agent_above_official"] == n,
        )
        for label, r in runs.items()
    ]
    u = res["urls"]
    figures.append(
        figure(
            "org snapshot: passages without url",
            u["passages_without_url"],
            "passages",
            goal="0",
            met=u["passages_without_url"] == 0 and u["documents_without_url"] == 0,
        )
    )
    print_figures("org questions", figures)
    method = (
        "bench/bench_org_questions.py: bench/eval/org_questions.jsonl (10 questions with their official pages) over "
        "the org refresh's snapshot, k hits each; agent files recognised by path in the bench, not by the index."
    )
    save("org_questions", {"runs": runs, "figures": figures, "section": section(runs), "method": method})


if __name__ == "__main__":
    main()
