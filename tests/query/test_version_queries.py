"""bench/eval/version_queries.jsonl: judged version queries, checked against what the extractors read.

For every query, the right page must carry a target that satisfies the query's target and every wrong-version
page none (so ``--strict`` can keep the one and drop the others); docs-version queries are checked by folder
(the real Docusaurus config is not in the corpus copy)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.base import FileContext
from trustindex.extractors.markdown import extract_markdown
from trustindex.ingest.evidence import SourceEvidence
from trustindex.query.target_match import parse_target
from trustindex.schemas.components import load_components
from trustindex.schemas.policy import Policy
from trustindex.schemas.versions import ConstraintSet, classify

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ROOT / "bench" / "eval" / "version_queries.jsonl"
REGISTRY = load_components(ROOT / "examples" / "components.toml")
LEGACY = "main_versioned_docs/version-0.0.0/"


def _queries() -> list[dict]:
    return [json.loads(line) for line in QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_shape_and_coverage():
    qs = _queries()
    assert len(qs) >= 30 and len({q["id"] for q in qs}) == len(qs)
    for q in qs:
        assert set(q) == {"id", "query", "targets", "relevant", "wrong_version"}, q["id"]
        assert list(q["relevant"].values()) == [2] and q["wrong_version"], q["id"]
        assert not set(q["relevant"]) & set(q["wrong_version"]), q["id"]
    kinds = {REGISTRY.canonical(c) for q in qs for c in q["targets"]}
    assert {"docs", "network", "compact-language", "compact-compiler", "midnight-js"} <= kinds


@cache
def _targets(path: str) -> dict[str, list]:
    text = (REAL_DOCS / path).read_text("utf-8", "replace")
    ex = extract_markdown(text.encode(), FileContext("real", path))
    out: dict[str, list] = {}
    for t in SourceEvidence(Policy.default(), {}, [path]).version_targets(path, "markdown", text, ex):
        if t.status == "parsed":
            out.setdefault(REGISTRY.canonical(t.component), []).append(ConstraintSet.from_json(t.intervals))
    return out


def _satisfied(path: str, component: str, version: str) -> bool:
    target = parse_target(component, version).constraint
    return any(classify(c, target).status == "satisfies" for c in _targets(path).get(component, []))


@needs_real_docs
@pytest.mark.parametrize("q", _queries(), ids=lambda q: q["id"])
def test_right_page_satisfies_and_wrong_pages_do_not(q):
    ((asked, version),) = q["targets"].items()
    component = REGISTRY.canonical(asked)
    (right,) = q["relevant"]
    if component == "docs":
        legacy = version in ("0.0.0", "v0 (Legacy)")
        assert right.startswith(LEGACY) == legacy
        assert all(p.startswith(LEGACY) != legacy for p in q["wrong_version"])
        return
    assert _satisfied(right, component, version), (right, _targets(right).keys())
    for wrong in q["wrong_version"]:
        assert not _satisfied(wrong, component, version), wrong
