"""Component names without a registry: spellings merged, the docs' own pairings, families, close matches."""

from __future__ import annotations

import pytest

from trustindex.query.component_names import ComponentNames
from trustindex.schemas.components import (
    Component,
    ComponentRegistry,
    family_stem,
    is_contraction,
    is_family_glob,
    kebab,
    name_key,
)

STORED = {
    "Compact compiler": 4,
    "Compact Compiler": 1,
    "compact-compiler": 6,
    "Compactc": 1,
    "compact": 9,  # a release-notes folder
    "@midnight-ntwrk/compact-runtime": 3,
    "Compact runtime": 2,
    "Compact-runtime": 1,
    "midnight-js": 12,
    "Midnight.js": 5,
    "@midnight-ntwrk/midnight-js": 1,  # a table's `@midnight-ntwrk/midnight-js-*` row, named by its stem
    "docs": 40,
    "network": 3,
}


@pytest.mark.parametrize(
    "name, form, key",
    [
        ("Midnight.js", "midnight-js", "midnightjs"),
        ("MidnightJS", "midnightjs", "midnightjs"),
        ("@midnight-ntwrk/compact-runtime", "compact-runtime", "compactruntime"),
        ("Compact toolchain", "compact-toolchain", "compacttoolchain"),
        ("@midnight-ntwrk/midnight-js-*", "midnight-js", "midnightjs"),
        ("On-chain runtime", "on-chain-runtime", "onchainruntime"),
    ],
)
def test_a_names_id_form_and_spelling_key(name, form, key):
    assert (kebab(name), name_key(name)) == (form, key)


@pytest.mark.parametrize(
    "short, long, contracted",
    [
        ("Compactc", "Compact compiler", True),  # a tool named after what it is
        ("Compact devtools", "Compact developer tools", True),
        ("compact", "Compact compiler", False),  # a bare first word is a family's stem, not a contraction
        ("mn-js", "midnight-js", False),  # the first word must be whole
        ("midnightjs", "Midnight JS SDK", False),  # a middle word gives three letters, or itself
        ("Compact JS", "compact-js", False),  # the same length: a spelling, not a contraction
    ],
)
def test_a_contraction_is_the_first_word_then_prefixes(short, long, contracted):
    assert is_contraction(short, long) is contracted


def test_a_family_glob_is_named_by_its_stem():
    assert is_family_glob("@midnight-ntwrk/midnight-js-*") and not is_family_glob("midnight-js")
    assert family_stem("@midnight-ntwrk/midnight-js-*") == "@midnight-ntwrk/midnight-js"
    assert family_stem("Compact runtime") == "Compact runtime"


def test_spellings_merge_under_one_name_and_the_merge_is_kept():
    names = ComponentNames(STORED, pairs=[("compact", "Compact compiler"), ("compact", "Compact toolchain")])
    assert {names.of(n) for n in ("Compact compiler", "Compact Compiler", "compact-compiler", "compact")} == {
        "compact-compiler"  # the folder and its index page's title: one component, named by its commonest form
    }
    assert names.of("Compactc") == "compact-compiler"  # a contraction of "Compact compiler"
    assert names.of("Compact runtime") == names.of("@midnight-ntwrk/compact-runtime") == "compact-runtime"
    assert names.variants["compact-runtime"] == (
        "@midnight-ntwrk/compact-runtime",
        "Compact runtime",
        "Compact-runtime",
    )
    assert names.of("docs") == "docs" and "docs" not in names.variants  # labels are never merged
    assert not [n for n in names.names if n.endswith(("-", "*"))]


def test_requested_names_resolve_and_say_how():
    names = ComponentNames(STORED, pairs=[("compact", "Compact toolchain")])
    assert names.of("compact-compiler") == "compact-compiler" and names.of("compact") == "compact"
    assert names.resolve("midnight-js").how == "as written"
    scoped = names.resolve("@midnight-ntwrk/midnight-js")
    assert scoped.component == "midnight-js" and scoped.how.startswith("spelling of 'midnight-js'")
    assert names.resolve("Compact toolchain").component == "compact"  # the docs' own pairing
    glob = names.resolve("@midnight-ntwrk/midnight-js-*")
    assert glob.component == "midnight-js" and glob.how.startswith("family glob")
    member = names.resolve("@midnight-ntwrk/midnight-js-contracts")
    assert member.component == "midnight-js" and "member of family 'midnight-js-*'" in member.how
    # an unscoped unknown name is no package of anything; a scoped near-spelling is a misspelling
    assert names.resolve("midnight-js-contracts").component is None
    assert names.resolve("@midnight-ntwrk/compact-runtme").component is None


def test_close_names_are_suggested_for_an_unknown_one():
    names = ComponentNames(STORED)
    assert names.suggest("midnite-js")[0] == "midnight-js"
    assert names.suggest("compact-runtme")[0] == "compact-runtime"
    assert len(names.suggest("compact")) <= 3
    assert names.suggest("zzzz") == []


def test_the_registry_wins_where_it_speaks():
    registry = ComponentRegistry(
        [Component("compact-compiler", ("Compact toolchain", "compact", "compactc"), ()),
         Component("midnight-js", ("Midnight.js",), ("@midnight-ntwrk/midnight-js-*",))]
    )  # fmt: skip
    # the build stored the registry's ids; a name it knows resolves by it, never by spelling alone
    names = ComponentNames({"compact-compiler": 5, "midnight-js": 3, "Compact language": 1}, registry)
    assert names.resolve("Compactc").component == "compact-compiler"
    assert names.resolve("@midnight-ntwrk/midnight-js-types").how.startswith("member of family")
    assert names.resolve("Compact Language").component == "compact-language"  # the registry is silent: spelling
