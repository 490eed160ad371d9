"""The component registry (components.toml): aliases, families, errors, and what a snapshot does with it."""

from pathlib import Path

import pytest

from trustindex.schemas.components import ComponentRegistry, load_components
from trustindex.schemas.config import load_build_config
from trustindex.schemas.errors import ConfigError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

REGISTRY = """
[[component]]
id = "midnight-js"
aliases = ["Midnight.js", "@midnight-ntwrk/midnight-js"]
families = ["@midnight-ntwrk/midnight-js-*"]

[[component]]
id = "compact-compiler"
aliases = ["Compact toolchain", "compact"]
"""


def test_aliases_and_families_resolve_to_the_canonical_id(tmp_path):
    f = tmp_path / "components.toml"
    f.write_text(REGISTRY)
    reg = load_components(f)
    assert reg.resolve("midnight.JS").component == "midnight-js"
    assert reg.resolve("Midnight.js").how == "alias of component 'midnight-js'"
    member = reg.resolve("@midnight-ntwrk/midnight-js-contracts")
    assert member.component == "midnight-js" and "family '@midnight-ntwrk/midnight-js-*'" in member.how
    assert reg.resolve("Compact toolchain").component == "compact-compiler"
    # a name the registry does not know stays itself, as written
    assert reg.resolve("@midnight-ntwrk/ledger-v8").component == "@midnight-ntwrk/ledger-v8"
    assert reg.resolve("midnight-js").how == "canonical id"
    # the stored target keeps the name as written in its detail
    assert reg.rename("Midnight.js", "title 'Midnight.js 3.0.0'") == (
        "midnight-js",
        "written as 'Midnight.js' (alias of component 'midnight-js'); title 'Midnight.js 3.0.0'",
    )
    assert reg.rename("docs", "folder") == ("docs", "folder")  # docs versions are never renamed
    assert ComponentRegistry.from_json(reg.to_json()).to_json() == reg.to_json() and reg.digest


@pytest.mark.parametrize(
    "text, key, words",
    [
        ('[[component]]\naliases = ["x"]\n', "component[0].id", "component id"),
        ('[[component]]\nid = "a b"\n', "component[0].id", "component id"),
        ('[[component]]\nid = "a"\nalias = ["x"]\n', "component[0].alias", "unknown key"),
        ('[[component]]\nid = "a"\naliases = "x"\n', "component[a].aliases", "list"),
        (
            '[[component]]\nid = "a"\naliases = ["X"]\n[[component]]\nid = "b"\naliases = ["x"]\n',
            "component[b].aliases",
            "already names component 'a'",
        ),
        ("component = 3\n", "component", "[[component]]"),
        ('[[components]]\nid = "a"\n', "components", "unknown key"),
    ],
)
def test_bad_registry_names_file_and_key(tmp_path, text, key, words):
    f = tmp_path / "components.toml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_components(f)
    assert e.value.key == key and words in e.value.problem and str(f) in str(e.value)


def test_build_config_reads_the_registry_beside_sources(tmp_path):
    for name in ("sources.toml", "identities.toml"):
        (tmp_path / name).write_text((EXAMPLES / name).read_text())
    assert not load_build_config(str(tmp_path / "sources.toml")).components  # none: names stay as written
    (tmp_path / "components.toml").write_text(REGISTRY)
    cfg = load_build_config(str(tmp_path / "sources.toml"))
    assert [c.id for c in cfg.components.components] == ["midnight-js", "compact-compiler"]
    with pytest.raises(ConfigError, match="components file not found"):
        load_build_config(str(tmp_path / "sources.toml"), components=str(tmp_path / "nope.toml"))


def test_example_registry_knows_the_midnight_components():
    reg = load_components(EXAMPLES / "components.toml")
    expect = {
        "Midnight.js": "midnight-js",
        "@midnight-ntwrk/midnight-js-contracts": "midnight-js",
        "Compact toolchain": "compact-compiler",
        "Compact runtime": "compact-runtime",
        "@midnight-ntwrk/compact-runtime": "compact-runtime",
        "Compact language": "compact-language",
        "@midnight-ntwrk/ledger-v8": "ledger",
        "compact-tools": "compact-devtools",  # a release-notes folder
        "Wallet SDK": "wallet-sdk",
    }
    assert {name: reg.canonical(name) for name in expect} == expect


def test_snapshot_stores_canonical_ids_and_queries_resolve_aliases(index):
    """The demo ships the example registry: its partner SDK depends on @midnight-ntwrk/midnight-js-contracts."""
    d = index.data
    assert d.registry and "midnight-js" in d.components
    assert not any(c.startswith("@midnight-ntwrk/midnight-js") for c in d.components)
    rows = [r for rs in (*d.doc_versions.values(), *d.chunk_versions.values()) for r in rs]
    written = [r for r in rows if r.component == "midnight-js"]
    assert written and all("written as '@midnight-ntwrk/midnight-js-" in (r.detail or "") for r in written)
    for asked in ("@midnight-ntwrk/midnight-js-contracts", "Midnight.js", "midnight-js"):
        r = index.search("contract calls from TypeScript", k=5, targets={asked: "0.2.5"})
        (t,) = r["targets"]
        assert t["component"] == "midnight-js" and t["requested"] == "0.2.5"
        if asked == "midnight-js":
            assert "component_requested" not in t
        else:
            assert t["component_requested"] == asked and "component 'midnight-js'" in t["component_resolution"]
