"""A Docusaurus site's navigation as links: sidebar labels and ``_category_`` labels (pure; never executed).

A sidebar names the pages of a docs plugin by doc id and gives each the label a reader sees in the menu; a
``_category_.json``/``.yml`` names a folder (and the page that opens it).  Those labels are written by the site's
maintainers about the page, not by the page: what the site calls it.  ``sidebars.js``/``.ts`` are JavaScript from a
repository we do not control: read as data (extractors/js_config.py ``exported_value``), a value that is not a
plain literal is skipped.  A doc item without a label carries no words of its own and makes no link.
"""

from __future__ import annotations

import json
import posixpath
import re

from trustindex.extractors.js_config import UNREAD, exported_value
from trustindex.extractors.links import PageLink, clean_text
from trustindex.schemas.links import CATEGORY, SIDEBAR, SIDEBAR_HREF

# sidebars.js, sidebars.main.ts, ...; a released version's (<id>_versioned_sidebars/version-X-sidebars.json)
SIDEBARS_RE = re.compile(r"^(?:.*/)?sidebars(?:\.[\w-]+)?\.(?:c|m)?(?:js|ts)$")
# Another site generator's navigation as JSON (react.dev's src/sidebarLearn.json: {"title", "path", "routes"})
NAV_JSON_RE = re.compile(r"^(?:.*/)?sidebar[\w.-]*\.json$", re.I)
VERSIONED_SIDEBARS_RE = re.compile(
    r"^(?P<root>(?:.*/)?)(?:(?P<id>[^/]+)_)?versioned_sidebars/version-(?P<ver>[^/]+)-sidebars\.json$"
)
CATEGORY_RE = re.compile(r"^(?:.*/)?_category_\.(?:json|ya?ml)$")
MAX_ITEMS = 20_000  # items read from one file: a hostile sidebar cannot make the walk unbounded
MAX_NAV_BYTES = 1 << 20
MAX_DEPTH = 32  # nesting walked: a sidebar nests a few levels; a hostile one cannot make the walk recurse without end


def is_navigation_file(path: str) -> bool:
    return any(r.match(path) for r in (SIDEBARS_RE, VERSIONED_SIDEBARS_RE, CATEGORY_RE, NAV_JSON_RE))


def navigation_links(path: str, data: bytes) -> list[PageLink]:
    """The labelled links of one navigation file (a sidebars file or a ``_category_`` file); [] for one that
    cannot be read (it is evidence, never a failure)."""
    text = data.decode("utf-8", "replace")
    if CATEGORY_RE.match(path):
        return _category_links(path, text)
    if path.endswith(".json"):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's stack
            return []
    else:
        value = exported_value(text)
    out: list[PageLink] = []
    if NAV_JSON_RE.match(path) and not VERSIONED_SIDEBARS_RE.match(path):
        _walk_tree(value, out, 0)
    elif isinstance(value, dict):
        for items in value.values():
            _walk(items, out)
    return out[:MAX_ITEMS]


def _walk_tree(node, out: list[PageLink], depth: int) -> None:
    """A navigation tree of another generator: every object with a label (``title``/``label``) and an address
    (``path``/``href``/``to``) is a link; its lists are walked."""
    if len(out) >= MAX_ITEMS or depth > MAX_DEPTH:
        return
    if isinstance(node, dict):
        label = next((node[k] for k in ("title", "label") if isinstance(node.get(k), str)), "")
        href = next((node[k] for k in ("path", "href", "to") if isinstance(node.get(k), str)), "")
        if clean_text(label) and href:
            out.append(PageLink(SIDEBAR_HREF, clean_text(label), href, 0))
        children = list(node.values())
    elif isinstance(node, list):
        children = node
    else:
        return
    for child in children:
        if isinstance(child, dict | list):
            _walk_tree(child, out, depth + 1)


def _walk(items, out: list[PageLink], depth: int = 0) -> None:
    """Docusaurus sidebar items: a list of items, or the shorthand ``{"Category label": [items]}``."""
    if depth > MAX_DEPTH:
        return
    if isinstance(items, dict) and "type" not in items:  # shorthand categories (their labels name no page)
        for sub in items.values():
            _walk(sub, out, depth + 1)
        return
    for item in items if isinstance(items, list) else [items]:
        if len(out) >= MAX_ITEMS or not isinstance(item, dict):
            continue  # a bare doc id has no label of its own
        kind, label = item.get("type"), item.get("label")
        label = clean_text(label) if isinstance(label, str) else ""
        if kind in ("doc", "ref") and isinstance(item.get("id"), str) and label:
            out.append(PageLink(SIDEBAR, label, item["id"], 0))
        elif kind == "link" and isinstance(item.get("href"), str) and label:
            out.append(PageLink(SIDEBAR_HREF, label, item["href"], 0))
        elif kind == "category" or (kind is None and "items" in item):
            link = item.get("link")
            if isinstance(link, dict) and link.get("type") == "doc" and isinstance(link.get("id"), str) and label:
                out.append(PageLink(SIDEBAR, label, link["id"], 0))
            _walk(item.get("items", []), out, depth + 1)


def _category_links(path: str, text: str) -> list[PageLink]:
    """A category file's label: for the doc its ``link`` names, else (no ``link`` key) for its folder's index page
    (Docusaurus's category index convention); ``link: null`` or a generated index names no page."""
    value = None
    try:
        if path.endswith(".json"):
            value = json.loads(text)
        else:
            import yaml

            value = yaml.safe_load(text)
    except Exception:  # bad JSON or YAML: no evidence
        return []
    if not isinstance(value, dict) or not isinstance(value.get("label"), str):
        return []
    label = clean_text(value["label"])
    link = value.get("link", UNREAD)
    if not label:
        return []
    if link is UNREAD:
        return [PageLink(CATEGORY, label, posixpath.dirname(path), 0)]
    if isinstance(link, dict) and link.get("type") == "doc" and isinstance(link.get("id"), str):
        return [PageLink(SIDEBAR, label, link["id"], 0)]
    return []
