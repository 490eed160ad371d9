"""The refresh's typed results (schemas/refresh_run.py, issue 25 item 4) keep the JSON the dicts had: the command's
``--json``, ``last_run.json`` and the run artifact, key for key and value for value, on a small real refresh with
one source that fails (real git repositories, the real flow through the command line, the real encoder)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from uuid import UUID

import pytest

from tests.kits.gitutil import RepoBuilder

# The keys as the flows wrote them before they were typed, in their order.
RESULT_KEYS = [
    "snapshot_id",
    "published",
    "reused_snapshot",
    "row_counts",
    "embeddings",
    "forced_past_gate",
    "stages",
    "failures",
    "resources",
    "sources",
    "seconds",
    "flow_run_id",
]
RECORD_KEYS = [
    "finished_at",
    "snapshot_id",
    "published",
    "reused_snapshot",
    "row_counts",
    "embeddings",
    "failures",
    "sources",
    "forced_past_gate",
    "seconds",
    "stages",
    "resources",
    "flow_run_id",
    "compile",
]
ROW_KEYS = [
    "source",
    "repo",
    "ref",
    "commit",
    "commit_date",
    "publisher",
    "tier",
    "config_sha256",
    "status",
    "error",
    "note",
]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("result")
    b = RepoBuilder(root / "good")
    sha = b.commit({f"docs/p{i}.md": f"# Page {i}\n\nGood page {i} about shielded tokens.\n" for i in range(3)}, "docs")
    (root / "identities.toml").write_text('[[publisher]]\nid = "mf"\nname = "MF"\ntier = "foundation"\n')
    (root / "sources.toml").write_text(
        f'[[source]]\nname = "good"\nurl = "{b.path}"\nref = "main"\npublisher = "mf"\n\n'
        f'[[source]]\nname = "missing"\nurl = "{root / "nowhere"}"\nref = "main"\npublisher = "mf"\n'
    )
    return {"root": root, "sha": sha, "when": b.t, "data": root / "data"}


def _refresh_json(world, capsys) -> dict:
    from trustindex.cli.main import main

    capsys.readouterr()
    args = ["refresh", "--json", "--quiet", "--sources", str(world["root"] / "sources.toml"), "--data"]
    assert main([*args, str(world["data"])]) == 3  # a source failed: the command says so
    return json.loads(capsys.readouterr().out)


def _artifact(flow_run_id: str) -> str:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=["trustindex-run"]),
                flow_run_id=ArtifactFilterFlowRunId(any_=[UUID(flow_run_id)]),
            )
        )
    assert len(artifacts) == 1
    return artifacts[0].data


def _check_rows(rows: list[dict], world) -> None:
    from trustindex.schemas.config import load_sources

    configured = {s.name: s for s in load_sources(world["root"] / "sources.toml")}
    assert [list(r) for r in rows] == [ROW_KEYS, ROW_KEYS]
    good, missing = rows
    when = world["when"].astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"
    assert good == {
        "source": "good",
        "repo": configured["good"].url,
        "ref": "main",
        "commit": world["sha"],
        "commit_date": when,
        "publisher": "mf",
        "tier": "foundation",
        "config_sha256": configured["good"].config_sha256,
        "status": "ok",
        "error": None,
        "note": good["note"],
    }
    assert missing["commit"] is None and missing["commit_date"] is None and missing["status"] == "failed"
    assert "does not exist" in missing["error"] and missing["note"] == "failed; no earlier tables to serve"
    assert missing["config_sha256"] == configured["missing"].config_sha256 and missing["tier"] == "foundation"


def test_the_typed_results_write_the_json_the_dicts_wrote(world, prefect_harness, capsys):
    first = _refresh_json(world, capsys)
    assert list(first) == [*RESULT_KEYS, "command_seconds"]  # no "compile": no compilers.toml
    _check_rows(first["sources"], world)
    assert first["sources"][0]["note"] == "full build"
    assert first["published"] is True and first["reused_snapshot"] is False and first["forced_past_gate"] == []
    assert re.fullmatch(r"[0-9a-f-]+", first["snapshot_id"])
    assert first["failures"] == {"missing": first["sources"][1]["error"]}
    assert first["row_counts"]["documents"] == 3 and all(isinstance(n, int) for n in first["row_counts"].values())
    e = first["embeddings"]
    assert list(e) == ["total", "distinct", "cache_hits", "encoded"] and all(isinstance(n, int) for n in e.values())
    assert e["total"] == first["row_counts"]["chunks"] and e["cache_hits"] + e["encoded"] == e["distinct"] > 0
    assert list(first["resources"]) == ["sources_at_once", "embed_worker", "model_loads"]
    assert first["resources"]["sources_at_once"] >= 1 and isinstance(first["resources"]["model_loads"], int)
    assert isinstance(first["seconds"], float) and first["seconds"] > 0 and UUID(first["flow_run_id"])
    stages = [(r["stage"], r["source"]) for r in first["stages"]]
    # the sources' stages in configured order (the failed one has none), then the build's
    assert stages.index(("fetch", "good")) < stages.index(("ingest", "good")) < stages.index(("publish", None))
    assert not any(source == "missing" for _, source in stages) and stages[-1] == ("publish", None)

    record = json.loads((world["data"] / "last_run.json").read_text())
    assert list(record) == RECORD_KEYS
    assert record["compile"] is None and datetime.fromisoformat(record["finished_at"]).tzinfo is not None
    assert {k: v for k, v in record.items() if k not in ("finished_at", "compile")} == {
        k: v for k, v in first.items() if k != "command_seconds"
    }

    body = _artifact(first["flow_run_id"])
    sha = world["sha"][:12]
    assert body.startswith(
        f"**snapshot {first['snapshot_id']}** (published)\n\n- good: ok at {sha} — full build\n"
        "- missing: failed at  — failed; no earlier tables to serve\n\n"
        f"**time**: {first['seconds']:.2f} s in the flow\n\n| stage | source | seconds | count | rate |\n"
    )

    again = _refresh_json(world, capsys)  # nothing changed: the snapshot is reused, nothing embedded
    assert list(again) == list(first) and again["snapshot_id"] == first["snapshot_id"]
    assert again["reused_snapshot"] is True and again["sources"][0]["note"] == "unchanged: tables reused"
    assert again["embeddings"] == {"total": 0, "distinct": 0, "cache_hits": 0, "encoded": 0}
    _check_rows(again["sources"], world)


def test_the_results_json_is_their_fields():
    from trustindex.schemas.refresh_run import (
        BackfillResult,
        BuildResult,
        EmbeddingCounts,
        RefreshResult,
        Resources,
        SourceRow,
    )

    row = SourceRow("s", "u", "main", "c" * 40, "2025-01-07T14:30:00Z", "mf", "foundation", "f" * 64, note="full")
    built = BuildResult("sid", True, False, {"chunks": 4}, EmbeddingCounts(4, 3, 2, 1), (), ({"stage": "embed"},))
    run = RefreshResult.of(built, sources=(row,), resources=Resources(1, "shared", 0), seconds=1.5)
    assert list(run.to_json()) == RESULT_KEYS
    assert RefreshResult.of(built, compile={"compiled": 1}).to_json()["compile"] == {"compiled": 1}
    assert list(RefreshResult.of(built, compile={"compiled": 1}).to_json())[7] == "compile"  # after the stages
    back = BackfillResult.of(run, as_of="2025-06-01T23:59:59+00:00", commits={"s": "c" * 40})
    assert list(back.to_json()) == [*RESULT_KEYS, "as_of", "commits"] and back.sources == (row,)
    # texts the source tasks encoded are this run's work, as far as the build found them in the cache
    assert EmbeddingCounts(4, 3, 2, 1).with_encoded_early(5) == EmbeddingCounts(4, 3, 0, 3)
    assert EmbeddingCounts(4, 3, 2, 1).with_encoded_early(1) == EmbeddingCounts(4, 3, 1, 2)
