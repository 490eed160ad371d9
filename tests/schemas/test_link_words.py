"""An inline link keeps its words wherever words are read: one pattern (schemas/links.py INLINE_LINK)."""

from trustindex.extractors.compat_matrix import component_name
from trustindex.schemas.links import INLINE_LINK, link_words
from trustindex.schemas.page_url import github_slug


def test_a_link_or_an_image_keeps_its_words_and_loses_its_target():
    text = "See [the guide](../guide.md#setup) and ![the logo](img/logo.png), not [broken]( nor `[x]`"
    assert link_words(text) == "See the guide and the logo, not [broken]( nor `[x]`"
    assert [m[1] for m in INLINE_LINK.finditer(text)] == ["the guide", "the logo"]


def test_the_slugger_and_a_compatibility_cell_read_links_alike():
    # the heading's id is the slug of the words the page shows, the link's target is no part of it
    assert github_slug("Install [Compact](./compact.md)") == "install-compact"
    # an image in a matrix's first cell names its component by its alt text, not by "!Compact"
    assert component_name("![Compact](icons/compact.svg)") == "Compact"
    assert component_name("[Midnight.js](https://example.org/js)") == "Midnight.js"
