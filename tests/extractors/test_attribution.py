"""Attribution comes from the operator's configuration only."""

from trustindex.extractors.attribution import attribute
from trustindex.schemas.config import Identities, Person, Publisher, PublisherOverride, Source


def ids() -> Identities:
    i = Identities()
    for p in (Publisher("mf", "Midnight Foundation", "foundation"), Publisher("lumen", "Lumen Labs", "partner")):
        i.publishers[p.id] = p
    i.add_person(Person("Marta", ("marta@lumen.example",), "lumen"))
    return i


SRC = Source(
    name="docs",
    url="x",
    ref="main",
    publisher="mf",
    publisher_overrides=(PublisherOverride("docs/partners/**", "lumen"),),
)


def test_source_publisher_and_tier():
    a = attribute(SRC, "docs/intro.md", ids(), "Someone", "someone@else.example")
    assert (a["publisher"], a["tier"], a["origin"]) == ("mf", "foundation", "source")
    assert a["author_publisher"] == ""  # an unknown author is evidence, not authority


def test_path_override_wins():
    a = attribute(SRC, "docs/partners/lumen.md", ids(), "Marta", "marta@lumen.example")
    assert (a["publisher"], a["tier"]) == ("lumen", "partner")
    assert a["origin"] == "publisher_override:docs/partners/**"
    assert a["author_publisher"] == "lumen"


def test_unknown_publisher_is_unknown_tier():
    src = Source(name="x", url="x", ref="main", publisher="ghost")
    assert attribute(src, "a.md", ids())["tier"] == "unknown"
