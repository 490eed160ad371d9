"""A refactor changes no response (issue 25): every judged query of bench/eval, and some with targets, strict and extra
phrasings, answered over the real-docs snapshot by the working tree and by ``BASE``, byte for byte.

The base side is the commit's own tree (``git archive``) laid out as the installed package is, by that commit's own
``pyproject.toml`` package-dir (``trustindex.layout.link_tree``, as the Makefile's typecheck target does), and put
first on PYTHONPATH of its own process; the editable install's finder comes after the path on ``sys.meta_path``, so
the base tree answers (checked: the dump names the package directory it imported). Both sides run
tests/kits/response_dump.py on the same reference day.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.kits.realdata import REAL_DOCS, ROOT, needs_real_docs
from trustindex.layout import link_tree

# The last commit that intentionally changed responses: 08fbb3f, a page in another language than its source's yields
# ([page_kind] other_language: 854 of 856 responses over the corpus copy differ in their policy_id alone, the other two
# not at all; no page there is in another language).  Before it: 70b4151, the calibration refitted with j8 in the
# judged set (every calibration_id and policy_id, 713 answer_confidences, 12 match tiers and with them their hits'
# display confidences, 8 abstention notes; no hit's order).  Before it: 5ad5b64, the changelog page kind ([page_kind]
# changelog 0.7, lifted by a question about changes: 854 of 856 responses over the corpus copy differ in their
# policy_id alone, the other two not at all).  Before it: 8ff307c, a legacy docs version's page doubted 0.9, not 0.5
# (deprecation.legacy_docs_multiplier: every policy_id changes; no order or score over the corpus copy, which has no
# legacy page).  Before it: 07abe62, a partial folds into the page that renders it and a
# folded passage names its file (same_page path).  Before it: a35cf67, one hit per page (issue 43: a page's later
# passages are folded under its hit in same_page, so every policy_id, score_contract_version and most hit lists
# change; no response's first hit, answer_confidence, tier or abstention does).  Before it: 1c7b9f8, the calibration
# refitted on the merged ranking (issue 43: every calibration_id, answer_confidence and some tiers change; no order
# does).  Before that: 873cfac, the merge of issue 43's branches: the site's links
# (289e7e5: [fusion] anchor_weight, anchor_half, authority_weight, authority_k, so every policy_id changes; every hit's
# ranking_terms.page gains anchor and authority, both weighted 0), the freshness floor 0.6 -> 0.9 (bf33a11: every
# trust_score of a page older than its half-life rises, and with it confidences and some orders), an MDX heading's
# {/*id*/} no part of its text (headings change), [feedback] (off: a policy section, so policy_id changes), and
# version truth (issue 42) and assistant framing (issue 40) merged before them.  Before it: canonical pages (issue 43
# item 2, d277e67): a page the docs site
# does not serve ranks below every served one (ranking_score x ranking_terms.route.served_floor, replacing
# fusion.unpublished_multiplier 0.94, so the policy_id changes too), every hit shows ranking_terms.route, every
# provenance part_of and copy_of, score_contract_version 5; blog posts cite the site's blog (no site_url in the bench's
# snapshot, so no URL changed there).  Before it: de4a3f0, the page kind ai_written (issue 29: the policy gains a
# [page_kind] ai_written weight, so every response's policy_id changes; nothing else in the real docs' responses did, no
# page of that corpus saying a model wrote it).  Before that: c3077a7, the merge of encoder recipe 5 (issue 30 item 1:
# static int8 activation scales, so a snapshot built by this tree carries other vectors, and BASE must embed queries the
# same way); 3175725, the merge of main into page_kind (issue 29 item 4: every hit's factors gain page_kind); before
# that 3a384d7, the merge of issue 27 (a response's "signed") onto issue 26's ranking.
# A deliberate ranking (or response) change moves BASE to its own commit in that commit, saying why; a refactor never
# moves it.
BASE = "08fbb3f2361e2eaaf5a47a332d3443509d3acd3b"
DUMP = Path(__file__).resolve().parents[1] / "kits" / "response_dump.py"
SHOWN_DIFFERENCES = 3


def _base_tree(tmp: Path) -> Path:
    """BASE's files under ``tmp/tree`` and the package layout over them under ``tmp/pkg`` (returned)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no base commit to compare with")
    known = subprocess.run(["git", "cat-file", "-e", f"{BASE}^{{commit}}"], cwd=ROOT, capture_output=True)
    if known.returncode:
        pytest.skip(f"base commit {BASE[:12]} is not in this clone's history (a shallow clone? git fetch --unshallow)")
    tree, pkg = tmp / "tree", tmp / "pkg" / "trustindex"
    tree.mkdir()
    archive = tmp / "base.tar"
    subprocess.run(["git", "archive", "--format=tar", "-o", str(archive), BASE], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    link_tree(tree, pkg.parent)
    return pkg.parent


def _cases() -> list[dict]:
    from bench import eval_set

    judged = eval_set.load()
    cases = [{"query": q.query, "k": 10} for q in judged]
    versions = [json.loads(x) for x in (ROOT / "bench/eval/version_queries.jsonl").read_text().splitlines() if x]
    for v in versions:
        cases.append({"query": v["query"], "k": 10, "targets": v["targets"]})
        cases.append({"query": v["query"], "k": 10, "targets": v["targets"], "strict": True})
    # other depths and the extra phrasings (each embedded in a batch of its own, fused as more channels)
    for q in judged[:20]:
        cases.append({"query": q.query, "k": 3})
        cases.append({"query": q.query, "k": 50})
    for a, b in zip(judged[:10], judged[10:20], strict=True):
        cases.append({"query": a.query, "k": 10, "also": [b.query]})
    return cases


def _dump(pythonpath: Path | None, cases: Path, data: Path, day: str) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    cmd = [sys.executable, str(DUMP), str(cases), str(data), day]
    # run from the temporary directory: the repository root on sys.path would offer its own trustindex/ folder
    return subprocess.Popen(cmd, env=env, cwd=cases.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _answers(proc: subprocess.Popen, side: str) -> tuple[dict, list[str]]:
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, f"the {side} side failed:\n{err[-4000:]}"
    header, *lines = out.splitlines()
    return json.loads(header), lines


def _readable(case: dict, base: str, now: str) -> str:
    a = json.dumps(json.loads(base), indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    b = json.dumps(json.loads(now), indent=1, sort_keys=True, ensure_ascii=False).splitlines()
    diff = list(difflib.unified_diff(a, b, f"base {BASE[:12]}", "working tree", n=2, lineterm=""))
    return f"{json.dumps(case)}\n" + "\n".join(diff[:60]) + ("\n..." if len(diff) > 60 else "")


@needs_real_docs
def test_responses_are_those_of_the_base_commit(tmp_path):
    from bench.bench_retrieval import RETRIEVAL_WORK, build_data

    data = build_data(RETRIEVAL_WORK, REAL_DOCS)
    base_pkg = _base_tree(tmp_path)
    cases = _cases()
    cases_file = tmp_path / "cases.json"
    cases_file.write_text(json.dumps(cases))
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    procs = {"base": _dump(base_pkg, cases_file, data, day), "working tree": _dump(None, cases_file, data, day)}
    (base_where, base), (now_where, now) = (_answers(p, side) for side, p in procs.items())
    # the base tree's own room finder (trustindex/__init__.py since the rooms' layout) may answer from its folder,
    # which the package's link points to: the same files either way
    assert Path(base_where["package"]).resolve() == (base_pkg / "trustindex" / "query").resolve(), base_where
    assert now_where["package"] == str(ROOT / "query"), now_where
    assert len(base) == len(now) == len(cases)
    differ = [j for j, (a, b) in enumerate(zip(base, now, strict=True)) if a != b]
    shown = "\n\n".join(_readable(cases[j], base[j], now[j]) for j in differ[:SHOWN_DIFFERENCES])
    assert not differ, f"{len(differ)} of {len(cases)} responses differ from {BASE[:12]}'s; the first:\n{shown}"
