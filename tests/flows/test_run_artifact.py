"""The Prefect run's markdown artifact carries the build's stage timings (the demo refreshed through a real flow)."""

from __future__ import annotations

import json
from uuid import UUID


def test_the_run_artifact_tables_every_stage_of_the_last_run(refreshed):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    record = json.loads((refreshed["data"] / "last_run.json").read_text())
    run = UUID(record["flow_run_id"])  # the record names its flow run: other tests' runs share this server
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=["trustindex-run"]), flow_run_id=ArtifactFilterFlowRunId(any_=[run])
            )
        )
    assert len(artifacts) == 1, "no (or more than one) trustindex-run artifact on the refresh's flow run"
    body = artifacts[0].data
    assert f"**time**: {record['seconds']:.2f} s in the flow" in body
    lines = body.splitlines()
    start = lines.index("| stage | source | seconds | count | rate |") + 2  # past the header and its rule
    rows = lines[start : start + len(record["stages"]) + 1]
    rows = rows[: next((i for i, line in enumerate(rows) if not line.startswith("| ")), len(rows))]
    assert len(rows) == len(record["stages"]) > 0
    for row, r in zip(rows, record["stages"], strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[:3] == [r["stage"], r["source"] or "", f"{r['seconds']:.2f}"]
    embed = next(row for row in rows if row.startswith("| embed |"))
    rec = next(r for r in record["stages"] if r["stage"] == "embed")
    assert "from cache" in embed  # the session's shared embedding cache may hold every text already
    assert ("/s" in embed) == (rec["count"] > 0) == (rec.get("per_second") is not None), embed  # a rate iff encoded
