"""Batches never stop on one line: --batch, query.batch.search_batch and the MCP tool answer a bad request with
an error object in its place and go on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from trustindex.query.batch import BatchDefaults, search_batch
from trustindex.schemas.response import validate_response

ROOT = Path(__file__).resolve().parents[2]

REQUESTS = [
    {"query": "proof server"},  # 1: fine
    '{"query": "counter", ',  # 2: not JSON
    {"query": "counter", "targets": {"no-such-component": "1.0"}},  # 3: unknown component
    {"query": "counter contract", "targets": {"compact-language": "0.1"}, "strict": True},  # 4: known, unseen version
    {"query": "counter", "k": "ten"},  # 5: bad k
    {"question": "where is the query?"},  # 6: no query
    {"query": "install the compact compiler", "k": 2},  # 7: fine
]


def _check(answers: list[dict]) -> None:
    assert len(answers) == len(REQUESTS)
    errors = {a["line"]: a["error"] for a in answers if "error" in a}
    assert sorted(errors) == [2, 3, 5, 6]
    assert all("\n" not in e for e in errors.values())
    assert "not JSON" in errors[2]
    assert "no-such-component" in errors[3] and "list_versions lists them" in errors[3] and "\n" not in errors[3]
    assert "k must be an integer" in errors[5]
    assert '"query"' in errors[6]
    unseen = answers[3]
    assert unseen["abstained"] and unseen["abstention_reason"] == "version_unavailable"
    [t] = unseen["targets"]
    assert t["constraints_seen"] and "0.1" not in t["constraints_seen"]
    for a in (answers[0], answers[3], answers[6]):
        validate_response(a)
    assert len(answers[6]["hits"]) <= 2


def test_python_batch_helper_goes_on(index):
    _check(list(search_batch(index, REQUESTS, BatchDefaults(k=5))))


def test_cli_batch_goes_on_and_counts_failures(refreshed, tmp_path):
    batch = tmp_path / "q.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in REQUESTS]
    batch.write_text("\n".join(lines[:3]) + "\n\n" + "\n".join(lines[3:]) + "\n")  # a blank line keeps its number
    out = subprocess.run(
        [sys.executable, "-m", "trustindex.cli.main", "query", "--batch", str(batch), "--data", str(refreshed["data"])],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 4, out.stderr
    assert "4 request(s) failed" in out.stderr
    answers = [json.loads(x) for x in out.stdout.splitlines()]
    # the blank line after request 3 shifts the file's line numbers of the later requests by one
    for a in answers:
        if "line" in a and a["line"] > 3:
            a["line"] -= 1
    _check(answers)
