"""The links a reStructuredText (Sphinx) page writes, and the names it defines for other pages' links (pure).

Read line by line as extractors/restructuredtext.py reads a page, never by running docutils or Sphinx (a Sphinx
page's roles are only Sphinx's to know; the rules below are those of Sphinx's "Cross-referencing syntax" and
docutils' "Hyperlink References"):

- ``:doc:`target``` / ``:doc:`text <target>```: a page by its document name, without extension, relative to the
  page's folder, or with a leading ``/`` to the Sphinx source folder (``DOC_ROLE``);
- ``:ref:`label``` / ``:ref:`text <label>```: the section an explicit target ``.. _label:`` names, on any page of
  the site (``REF_ROLE``);
- the Python domain's roles (``:func:``, ``:class:``, ``:meth:``, ``:attr:``, ``:data:``, ``:exc:``, ``:mod:``,
  ``:obj:``, ``:const:``, ``:type:``, with or without ``py:``): the object a directive of the site documents
  (``OBJECT_ROLE``; ``~`` shows the last name only, ``!`` writes no link);
- hyperlinks with an embedded URI, `` `text <https://...>`_ ``, and named ones, `` `text`_ ``, whose
  ``.. _text: URI`` target the page defines (``MARKDOWN``'s resolution: a URL, or a path relative to the page).

Nothing inside a literal block (after ``::``), a code directive or an inline literal is a link.  A role whose title
is implicit has no anchor text of its own (Sphinx shows the target's title, which is the target's own words); an
object role's text is the name it shows.

The names a page defines are returned beside its links (``PageName``): each ``.. _label:`` that names a section
(``LABEL``), and each object an ``.. auto*::`` or ``.. py:*::`` directive documents (``OBJECT``), qualified by the
``.. module::`` / ``.. currentmodule::`` in force.  ingest/links.py resolves ``:ref:`` and object roles against
every page's names once the whole source is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trustindex.extractors.links import PageLink, clean_text
from trustindex.schemas.links import DOC_ROLE, LABEL, MARKDOWN, OBJECT, OBJECT_ROLE, REF_ROLE

_DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\.\s+(?P<name>[\w:+.-]+)\s?::(?:\s+(?P<arg>.*))?$")
_LABEL = re.compile(r"^\s*\.\.\s+_(?P<name>[^:`]+|`[^`]+`):\s*(?P<uri>\S.*)?$")
_CODE = frozenset({"code-block", "code", "sourcecode", "literalinclude", "doctest", "testcode", "ipython", "highlight"})
_ROLE = re.compile(r"(?<![\w`]):(?P<role>[A-Za-z][\w:+.-]*):`(?P<body>[^`]+)`(?!_)")
_TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
_HYPERLINK = re.compile(r"(?<![\w:`])`(?P<body>[^`]+)`__?(?!\w)")
_INLINE_LITERAL = re.compile(r"``.+?``")
_PY_ROLES = frozenset({"func", "class", "meth", "attr", "data", "exc", "mod", "obj", "const", "type", "function"})
_MODULE_DIRECTIVES = frozenset({"module", "currentmodule", "py:module", "py:currentmodule"})
_OBJECT_DIRECTIVES = re.compile(
    r"^(?:py:)?(?:auto)?(?:function|class|method|attribute|data|exception|module|decorator|property|classmethod|"
    r"staticmethod)$"
)
_NAME = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class PageName:
    kind: str  # schemas.links LABEL or OBJECT
    name: str  # a label as written (Sphinx compares them lower-cased), or an object's dotted name
    line: int  # 1-based


def rst_links(text: str) -> tuple[list[PageLink], list[PageName]]:
    """The page's links in the order written, and the names it defines (rules in the module docstring)."""
    lines = text.split("\n")
    named_uris = _named_uris(lines)
    links: list[PageLink] = []
    names: list[PageName] = []
    module = ""
    skip_deeper_than: int | None = None  # inside a literal block or a code directive: lines indented beyond this
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        indent = len(line) - len(line.lstrip())
        if skip_deeper_than is not None:
            if not line.strip() or indent > skip_deeper_than:
                continue
            skip_deeper_than = None
        directive = _DIRECTIVE.match(line)
        if directive:
            name, arg = directive["name"], (directive["arg"] or "").strip()
            if name in _CODE:
                skip_deeper_than = indent
            elif name in _MODULE_DIRECTIVES:
                module = "" if arg == "None" else arg
                if module and not name.endswith("currentmodule"):
                    names.append(PageName(OBJECT, module, i + 1))
            elif _OBJECT_DIRECTIVES.match(name) and (found := _NAME.match(arg)):
                names += _object_names(name, found.group(0), module, i + 1)
            continue
        label = _LABEL.match(line)
        if label:
            if not label["uri"]:
                names.append(PageName(LABEL, label["name"].strip("`"), i + 1))
            continue
        body = _INLINE_LITERAL.sub(lambda m: " " * len(m.group(0)), line)
        links += _line_links(body, i + 1, named_uris)
        if line.rstrip().endswith("::") and not line.lstrip().startswith(".."):
            skip_deeper_than = indent  # a paragraph ending in "::": the indented block after it is literal
    return links, names


def _named_uris(lines: list[str]) -> dict[str, str]:
    """The page's named hyperlink targets, ``.. _name: URI``, by their normalised name."""
    out: dict[str, str] = {}
    for line in lines:
        m = _LABEL.match(line)
        if m and m["uri"]:
            out.setdefault(_ref_name(m["name"].strip("`")), m["uri"].strip())
    return out


def _ref_name(name: str) -> str:
    """A reference name as docutils compares it: whitespace collapsed, case ignored."""
    return " ".join(name.split()).lower()


def _line_links(body: str, line: int, named_uris: dict[str, str]) -> list[PageLink]:
    out: list[tuple[int, PageLink]] = []
    for m in _ROLE.finditer(body):
        role = m["role"].removeprefix("py:")
        kind = DOC_ROLE if role == "doc" else REF_ROLE if role == "ref" else OBJECT_ROLE if role in _PY_ROLES else ""
        if not kind:
            continue  # :file:, :envvar:, :pep: and the like name no page of the site
        raw = m["body"].strip()
        titled = _TITLED.match(raw)
        text, target = (titled["text"], titled["target"]) if titled else ("", raw)
        target = target.strip()
        if kind == OBJECT_ROLE:
            if target.startswith("!"):
                continue  # Sphinx writes no link for it
            shown = target.lstrip("~.")
            text = text or (shown.rsplit(".", 1)[-1] if target.startswith("~") else shown)
            target = target.lstrip("~")
        out.append((m.start(), PageLink(kind, clean_text(text), target, line)))
    for m in _HYPERLINK.finditer(body):
        if body[max(0, m.start() - 1) : m.start()] == ":":
            continue  # a role's body, read above
        raw = m["body"].strip()
        titled = _TITLED.match(raw)
        if titled:
            out.append((m.start(), PageLink(MARKDOWN, clean_text(titled["text"]), titled["target"].strip(), line)))
        elif (uri := named_uris.get(_ref_name(raw))) is not None:
            out.append((m.start(), PageLink(MARKDOWN, clean_text(raw), uri, line)))
    return [link for _pos, link in sorted(out, key=lambda x: x[0])]


def _object_names(directive: str, name: str, module: str, line: int) -> list[PageName]:
    """The names an object directive documents: as written, and qualified by the module in force."""
    if directive.endswith("module"):
        return [PageName(OBJECT, name, line)]
    found = [name]
    if module and not name.startswith(module + "."):
        found.append(f"{module}.{name}")
    return [PageName(OBJECT, n, line) for n in dict.fromkeys(found)]
