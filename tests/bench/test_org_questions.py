"""bench/eval/org_questions.jsonl and how bench/bench_org_questions.py judges a ranking (issue 29, "Done when")."""

from __future__ import annotations

import json

import pytest

from bench.bench_org_questions import QUESTIONS, is_agent_file, judge, load_questions


def test_ten_questions_each_with_official_pages_of_a_source():
    questions = load_questions()
    assert len(questions) == 10
    assert len({q["id"] for q in questions}) == 10
    assert any(q["query"] == "Compact Map ledger type operations" for q in questions)
    for q in questions:
        assert any(g == 2 for g in q["official"].values()), q["id"]  # the page that answers it
        for page, grade in q["official"].items():
            source, _, path = page.partition(":")
            assert source and path and grade in (1, 2), (q["id"], page)
            assert not is_agent_file(source, path), (q["id"], page)  # an official page is written for people


@pytest.mark.parametrize(
    "source,path,agent",
    [
        ("midnight-indexer", "CLAUDE.md", True),
        ("example-zkloan", "AGENTS.md", True),
        ("midnight-sdk", ".claude/skills/effect-ts/references/config.md", True),
        ("midnight-did", ".codex/skills/ci-triage/SKILL.md", True),
        ("midnight-passport-sdk", "mn-passport-skills/skills/deps/SKILL.md", True),
        ("midnight-expert", "plugins/compact-core/README.md", True),
        ("midnight-docs", "docs/compact/reference/ledger-adt.mdx", False),
        ("midnight-docs", "docs/skills.md", False),  # a page named skills is not a skills folder
        ("midnight-indexer", "docs/architecture.md", False),
    ],
)
def test_agent_files_are_recognised_by_path(source, path, agent):
    assert is_agent_file(source, path) is agent


def _hit(source: str, path: str) -> dict:
    return {"provenance": {"source": source, "path": path, "url": f"https://example.org/{source}/{path}"}}


def test_judge_counts_agent_files_above_the_first_official_page():
    q = {"id": "x", "query": "q", "official": {"docs:ref.md": 2, "docs:guide.md": 1}}
    hits = [_hit("midnight-expert", "plugins/a/SKILL.md"), _hit("docs", "guide.md"), _hit("docs", "ref.md")]
    j = judge(q, hits)
    assert (j["first_official"], j["first_grade2"], j["agent_ranks"], j["agents_above_official"]) == (2, 3, [1], 1)
    assert not j["official_first"] and j["hits_without_url"] == 0
    none = judge(q, [_hit("x", "CLAUDE.md")])
    assert none["first_official"] is None and none["agents_above_official"] == 1


def test_a_question_without_official_pages_is_refused(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text(json.dumps({"id": "a", "query": "q", "official": {}}) + "\n")
    with pytest.raises(SystemExit, match="q.jsonl:1"):
        load_questions(bad)
    assert QUESTIONS.is_file()
