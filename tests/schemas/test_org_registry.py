"""Issue 29 item 6: the Midnight organisation's registry in examples/ loads, with its defaults, sets, publishers and
the components registry beside it, and every source cites github.com."""

from __future__ import annotations

from pathlib import Path

from trustindex.schemas.config import load_build_config
from trustindex.schemas.registry import BUILTIN_SETS

ORG = Path(__file__).resolve().parents[2] / "examples" / "midnight-org" / "sources.toml"


def test_the_org_registry_loads_with_its_components_and_cites_every_file():
    cfg = load_build_config(str(ORG))
    names = [s.name for s in cfg.sources]
    assert len(names) >= 40 and len(set(names)) == len(names)
    assert cfg.components  # components.toml beside the file is read by default
    assert {s.publisher for s in cfg.sources} <= set(cfg.ids.publishers)
    for s in cfg.sources:
        assert s.url == f"https://github.com/midnightntwrk/{s.name}.git" and s.follows_head
        assert s.web_template == "https://github.com/midnightntwrk/{name}/blob/{commit}/{path}#L{start}-L{end}"
        assert set(BUILTIN_SETS["vendored"]) <= set(s.exclude)
        assert "**/*.md" in s.include
    by_name = {s.name: s for s in cfg.sources}
    assert by_name["midnight-docs"].site_url == "https://docs.midnight.network"
    assert "**/*.compact" in by_name["example-counter"].include and "**/*.rs" in by_name["midnight-ledger"].include


def test_the_org_bench_points_the_registry_at_local_mirrors(tmp_path):
    import git

    from bench.bench_org_refresh import figures_of, local_registry, same_snapshot
    from tests.kits.gitutil import RepoBuilder

    for name in ("midnight-docs", "example-counter"):
        b = RepoBuilder(tmp_path / "work-trees" / name)
        b.commit({"README.md": f"# {name}\n"}, "first")
        git.Repo.clone_from(str(b.path), str(tmp_path / "mirrors" / f"midnightntwrk+{name}" / "repo"), bare=True)
    sources, kept, missing = local_registry(ORG, tmp_path / "mirrors", tmp_path / "work", None)
    assert kept == ["midnight-docs", "example-counter"] and len(missing) >= 40
    cfg = load_build_config(str(sources))
    assert [s.url for s in cfg.sources] == [
        str((tmp_path / "mirrors" / f"midnightntwrk+{n}" / "repo").resolve()) for n in kept
    ]
    assert cfg.components and all(s.web_template.startswith("https://github.com/midnightntwrk/") for s in cfg.sources)
    mode = {"wall_s": 10.0, "rss_mib": 900.0, "model_loads": 1, "data_bytes": 2**20, "snapshot_id": "a"}
    rows = figures_of({"today": dict(mode, wall_s=20.0), "bounded": mode}, {"rc": 0, "tracebacks": 0})
    assert rows[0]["ratio"] == 0.5 and rows[0]["met"] and rows[1]["met"] and rows[-1]["met"]
    assert same_snapshot({"today": mode, "bounded": mode}) and not same_snapshot(
        {"a": mode, "b": dict(mode, snapshot_id=None)}
    )
