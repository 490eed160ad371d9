"""Issue 29 item 6: the Midnight organisation's registry in examples/ loads, with its defaults, sets, publishers and
the components registry beside it, and every source cites github.com."""

from __future__ import annotations

from pathlib import Path

from trustindex.schemas.config import load_build_config
from trustindex.schemas.registry import BUILTIN_SETS

ORG = Path(__file__).resolve().parents[1] / "examples" / "midnight-org" / "sources.toml"


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
