"""Issue 4: every number of the response means what the contract says."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trustindex.schemas.errors import QueryError
from trustindex.schemas.policy import Policy
from trustindex.schemas.response import validate_response

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("q", ["Michael Jackson albums", "how to file taxes", "best lasagna recipe"])
def test_out_of_domain_is_low_and_capped(index, q):
    r = index.search(q, k=10)
    validate_response(r)
    assert r["match_tier"] == "low"
    assert all(h["display_confidence"] <= index.policy.match.low_ceiling + 1e-9 for h in r["hits"])


def test_in_domain_is_high(index):
    r = index.search("How do I install the Compact compiler?", k=5)
    assert r["match_tier"] == "high" and not r["abstained"]
    assert r["hits"][0]["display_confidence"] == pytest.approx(index.policy.match.high_ceiling)


def test_strict_target_keeps_only_satisfying(index):
    r = index.search("counter contract circuit", k=20, targets=["compact-language=0.23"], strict=True)
    validate_response(r)
    assert r["hits"], r["abstention_reason"]
    for h in r["hits"]:
        (t,) = h["factors"]["version_match"]["evidence"]["targets"]
        assert t["status"] == "satisfies"
        assert h["factors"]["version_match"]["multiplier"] == index.policy.version.satisfies


def test_permissive_target_drops_breaking_and_keeps_silent(index):
    r = index.search("counter contract circuit", k=50, targets={"compact-language": "0.23.0"})
    statuses = {h["factors"]["version_match"]["evidence"]["targets"][0]["status"] for h in r["hits"]}
    assert "breaking" not in statuses
    assert "version_silent" in statuses


def test_unsatisfiable_target_abstains_in_strict_mode(index):
    # every pragma in the demo needs 0.14 or later: nothing satisfies 0.1.0
    r = index.search("counter contract", k=5, targets=["compact-language=0.1.0"], strict=True)
    validate_response(r)
    assert r["abstained"] and r["abstention_reason"] == "version_unavailable" and r["hits"] == []
    assert r["targets"][0]["requested"] == "0.1.0" and r["targets"][0]["constraints_seen"]


def test_scores_do_not_change_with_k(index):
    q = "proof server memory and CPU"
    small = {h["chunk_id"]: h for h in index.search(q, k=3)["hits"]}
    large = {h["chunk_id"]: h for h in index.search(q, k=50)["hits"]}
    assert small and set(small) <= set(large)
    for cid, h in small.items():
        assert h["relevance_score"] == large[cid]["relevance_score"]
        assert h["display_confidence"] == large[cid]["display_confidence"]


def test_policy_edit_changes_id_and_scores_without_rebuild(refreshed):
    from trustindex.query.index import Index

    idx = Index.open(data_dir=refreshed["data"])
    q = "legacy wallet API"
    before = idx.search(q, k=10)
    idx.reload_policy(
        Policy.from_dict({"deprecation": {"multiplier": 0.05}, "attribution": {"tiers": {"foundation": 0.5}}})
    )
    after = idx.search(q, k=10)
    assert before["policy_id"] != after["policy_id"]
    assert before["snapshot_id"] == after["snapshot_id"]
    t0 = {h["chunk_id"]: h["trust_score"] for h in before["hits"]}
    changed = [h for h in after["hits"] if h["chunk_id"] in t0 and h["trust_score"] != t0[h["chunk_id"]]]
    assert changed


@pytest.mark.parametrize(
    "call, words",
    [
        (dict(query=""), "empty"),
        (dict(query="x" * 10_001), "limit"),
        (dict(query="counter", targets=["compact-language=banana"]), "banana"),
        (dict(query="counter", targets=["no-such-component=1.0"]), "no close name among its"),
        (dict(query="counter", targets=["nonsense"]), "COMPONENT=VERSION"),
        (dict(query="counter", k=0), "k must be"),
    ],
)
def test_bad_input_is_a_clear_error(index, call, words):
    with pytest.raises(QueryError, match=words):
        index.search(**call)


def test_control_characters_and_mixed_scripts_behave(index):
    r = index.search("proof\x00 server\x07 — доказательство 証明 سرور", k=3)
    validate_response(r)
    assert "\x00" not in r["query"]


def test_duplicates_collapse_into_one_hit(index):
    r = index.search("What is Midnight? data protection blockchain introduction", k=10)
    paths = [h["provenance"]["path"] for h in r["hits"]]
    assert len(paths) == len(set((h["chunk_id"]) for h in r["hits"]))
    texts = [h["text"] for h in r["hits"]]
    assert len(texts) == len(set(texts)), "identical passages must be one hit"
    assert any(h["also_in"] for h in r["hits"])


def test_also_phrasings_fuse_but_do_not_set_the_tier(index):
    q = "Michael Jackson albums"
    plain = index.search(q, k=5)
    hyde = index.search(q, k=5, also=["The proof server generates zero-knowledge proofs for transactions."])
    assert hyde["match_tier"] == plain["match_tier"] == "low"
    assert hyde["best_cosine"] == plain["best_cosine"]
    assert hyde["also"] and [h["chunk_id"] for h in hyde["hits"]] != [h["chunk_id"] for h in plain["hits"]]


def test_channels_are_reported(index):
    r = index.search("the of and", k=3)
    assert r["channels"]["dense"]["ran"] is True
    assert r["channels"]["lexical"]["ran"] is False and r["channels"]["lexical"]["reason"]
    assert r["channels"]["rerank"]["ran"] is False and "no reranking model" in r["channels"]["rerank"]["reason"]


def _cli(args, data):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", *args, "--data", str(data)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


def test_cli_bad_input_is_one_line_and_nonzero(refreshed):
    out = _cli(["query", "counter", "--target", "compact-language=banana"], refreshed["data"])
    assert out.returncode != 0 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "banana" in out.stderr


def test_cli_batch_prints_json_lines(refreshed, tmp_path):
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        json.dumps({"query": "proof server"})
        + "\n"
        + json.dumps({"query": "counter", "k": 2, "targets": {"compact-language": "0.23"}, "strict": True})
        + "\n"
    )
    out = _cli(["query", "--batch", str(batch)], refreshed["data"])
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    assert [r["query"] for r in lines] == ["proof server", "counter"]
    assert lines[1]["strict"] is True and len(lines[1]["hits"]) <= 2
    for r in lines:
        validate_response(r)


def test_calibrate_writes_a_policy(refreshed, tmp_path):
    # the demo's judged queries: each expected page (in-domain) and the off-topic list, in the judged format
    judged = tmp_path / "judged.jsonl"
    expected = [json.loads(x) for x in (ROOT / "examples/queries/expected.jsonl").read_text().splitlines() if x]
    off = [x for x in (ROOT / "examples/queries/out_of_domain.txt").read_text().splitlines() if x.strip()]
    judged.write_text(
        "".join(
            json.dumps({"id": f"e{i}", "query": q["query"], "relevant": {q["path"]: 2}}) + "\n"
            for i, q in enumerate(expected)
        )
        + "".join(json.dumps({"id": f"o{i}", "query": q, "relevant": {}}) + "\n" for i, q in enumerate(off))
    )
    out, html = tmp_path / "calibrated.toml", tmp_path / "calibration.html"
    r = _cli(["calibrate", "--judged", str(judged), "--out", str(out), "--html", str(html)], refreshed["data"])
    assert r.returncode == 0, r.stderr
    for words in (
        "ECE (10 bins)",
        "Brier",
        "AUROC",
        "selective accuracy at 80% coverage",
        "risk-coverage",
        "off-topic",
    ):
        assert words in r.stdout
    p = Policy.load(out)
    assert p.calibration_status == "operator" and p.match.calibration_id.startswith("operator:")
    assert p.match.features and p.match.heldout_n == len(expected) + len(off)
    assert p.match.mid_probability <= p.match.high_probability
    assert 'id="plot-reliability"' in html.read_text()
    q = _cli(["query", "How do I install the Compact compiler?", "--policy", str(out), "--json"], refreshed["data"])
    resp = json.loads(q.stdout)
    assert resp["calibration_status"] == "operator" and resp["calibration_id"] == p.match.calibration_id
