"""The links a Markdown/MDX page writes: each one's anchor text, target as written and line (pure).

Parsed by markdown-it-py (CommonMark): inline links ``[text](target)``, reference links ``[text][label]`` with
their ``[label]: target`` definitions, and autolinks ``<https://...>``; never inside code spans or fenced code.
MDX adds JSX: ``<a href>``, ``<Link to>`` and any element with an ``href=`` (a card, a button), its text or its
``title``/``label`` attribute as the anchor text.  A block of JSX that CommonMark reads as raw HTML (no blank line
inside) is scanned for the same elements and for Markdown links.  Images are not links; a linked image's alt text
is its anchor text.  What the targets name is extractors/link_targets.py's to say, with the whole site known.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cache

from trustindex.extractors.frontmatter import body_offset
from trustindex.schemas.links import AUTOLINK, HTML, MARKDOWN, REFERENCE

# An element with a link attribute: <a href="x">, <Link to="/x">, <Card href={"/x"} title="X" />
_TAG = re.compile(r"<(?P<name>[A-Za-z][\w.]*)(?P<attrs>(?:[^<>\"'{}]|\"[^\"]*\"|'[^']*'|\{[^{}]*\})*?)(?P<close>/?)>")
_ATTR = re.compile(r"(?P<key>[\w-]+)\s*=\s*(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|\{\s*([\"'`])(?P<js>[^\"'`]*)\4\s*\})")
_LINK_ATTRS = ("href", "to")
_TEXT_ATTRS = ("title", "label", "aria-label")
_ANY_TAG = re.compile(r"<[^<>]*>")
# An HTML/JSX tag inside anchor text (CommonMark leaves <code style={{...}}> as text: not valid HTML); a generic
# type's <K, V> is no tag (no attribute after its name)
_TAG_TEXT = re.compile(r"</?[A-Za-z][\w.-]*(?:\s[^<>]*)?/?>")
_MD_LINK = re.compile(r"(?<!!)\[(?P<text>[^\[\]\n]{1,300})\]\((?P<target><[^>\n]*>|[^)\s]+)(?:\s+[\"'][^\n]*?[\"'])?\)")
_SPACES = re.compile(r"\s+")
MAX_TEXT = 300  # characters of anchor text kept: a link around a whole paragraph says little more
MAX_LINK_SPAN = 4000  # characters between an element's opening and closing tag read as its text


@dataclass(frozen=True)
class PageLink:
    kind: str  # schemas.links.LINK_KINDS
    text: str
    target: str
    line: int  # 1-based line in the file


# What may start a link in a block's inline text: "[" (a link, a reference, a linked image) or "<" (an autolink or an
# HTML/JSX element); a paragraph without either holds no link and is not parsed inline.
_MAY_LINK = re.compile(r"[\[<]")
_PAGE_MAY_LINK = re.compile(r"\]\s*[(:\[]|\]$|<[A-Za-z]|<https?:", re.M)


@cache
def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True})
    md.normalizeLink = lambda url: url  # the target as written (percent-escapes are the resolver's to read)
    # blocks only: each block's inline text is parsed below when it may hold a link (half the time went to
    # parsing the inline text of paragraphs that hold none); emphasis only marks words, never a link
    md.disable(["inline", "emphasis"])
    return md


def page_links(text: str) -> list[PageLink]:
    """Every link of a Markdown/MDX page (front matter left out), in the order written."""
    start = body_offset(text)
    if not _PAGE_MAY_LINK.search(text, start):
        return []  # nothing that opens a link, a reference, an autolink or an element: no parse at all
    first_line = text.count("\n", 0, start) + 1
    md, env = _parser(), {}
    tokens = md.parse(text[start:], env)
    defined = {ref["href"] for ref in env.get("references", {}).values()}
    out: list[PageLink] = []
    for tok in tokens:
        line = first_line + (tok.map[0] if tok.map else 0)
        if tok.type == "inline" and _MAY_LINK.search(tok.content):
            tok.children = []
            md.inline.parse(tok.content, md, env, tok.children)
            out.extend(_inline_links(tok, line, defined))
        elif tok.type == "html_block":
            out.extend(raw_block_links(tok.content, line))
    return out


def _inline_links(tok, line: int, defined: set[str]) -> list[PageLink]:
    out: list[PageLink] = []
    md_link: tuple[str, str, int, list[str]] | None = None  # kind, target, line, words of a Markdown link
    tag_link: _OpenTag | None = None  # an <a>/<Link> opened by inline HTML
    for child in tok.children or []:
        words = ""
        if child.type in ("softbreak", "hardbreak"):
            line, words = line + 1, " "
        elif child.type in ("text", "text_special", "code_inline", "image"):  # text_special: an escaped character
            words = child.content  # an image's content is its alt text
        elif child.type == "link_open":
            href = str(child.attrs.get("href", ""))
            kind = AUTOLINK if child.info == "auto" else _markdown_kind(tok.content, href, defined)
            md_link = (kind, href, line, [])
        elif child.type == "link_close" and md_link is not None:
            out.append(PageLink(md_link[0], clean_text("".join(md_link[3])), md_link[1], md_link[2]))
            md_link = None
        elif child.type == "html_inline":
            tag_link = _inline_tag(child.content, tag_link, line, out)
        for link in (md_link, tag_link):
            if link is not None and words:
                link[-1].append(words)
    return out


def _markdown_kind(source: str, href: str, defined: set[str]) -> str:
    return REFERENCE if href in defined and f"]({href}" not in source else MARKDOWN


_OpenTag = tuple[str, str, int, str, list[str]]  # element name, target, line, title attribute, words


def _inline_tag(content: str, open_tag: _OpenTag | None, line: int, out: list[PageLink]) -> _OpenTag | None:
    """An inline HTML tag inside a paragraph: an opening link element starts a link (its text follows as text
    tokens), its closing tag ends it; a self-closing one is a link of its own (anchor text from its attributes)."""
    content = content.strip()
    if open_tag is not None and re.fullmatch(rf"</\s*{re.escape(open_tag[0])}\s*>", content):
        _name, target, at, title, words = open_tag
        out.append(PageLink(HTML, clean_text("".join(words)) or title, target, at))
        return None
    m = _TAG.fullmatch(content)
    attrs = _attributes(m["attrs"]) if m else {}
    target = next((attrs[k] for k in _LINK_ATTRS if k in attrs), None)
    if m is None or target is None:
        return open_tag
    title = clean_text(next((attrs[k] for k in _TEXT_ATTRS if k in attrs), ""))
    if m["close"]:
        out.append(PageLink(HTML, title, target, line))
        return open_tag
    return (m["name"], target, line, title, [])


def raw_block_links(block: str, first_line: int) -> list[PageLink]:
    """Links inside a block CommonMark leaves raw (JSX or HTML without a blank line): link elements with their
    inner text (or title), and Markdown links written inside them."""
    out: list[tuple[int, PageLink]] = []
    for m in _TAG.finditer(block):
        attrs = _attributes(m["attrs"])
        target = next((attrs[k] for k in _LINK_ATTRS if k in attrs), None)
        if target is None:
            continue
        text = ""
        if not m["close"]:
            # the closing tag within a link's reach (an unclosed tag costs a bounded look, not the rest of the block)
            end = re.compile(rf"</\s*{re.escape(m['name'])}\s*>").search(block, m.end(), m.end() + MAX_LINK_SPAN)
            text = clean_text(_ANY_TAG.sub(" ", block[m.end() : end.start()])) if end else ""
        text = text or clean_text(next((attrs[k] for k in _TEXT_ATTRS if k in attrs), ""))
        out.append((m.start(), PageLink(HTML, text, target, first_line + block.count("\n", 0, m.start()))))
    for m in _MD_LINK.finditer(block):
        target = m["target"].strip("<>")
        at = first_line + block.count("\n", 0, m.start())
        out.append((m.start(), PageLink(MARKDOWN, clean_text(_ANY_TAG.sub(" ", m["text"])), target, at)))
    return [link for _pos, link in sorted(out, key=lambda x: x[0])]


def _attributes(src: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in _ATTR.finditer(src):
        value = m["dq"] if m["dq"] is not None else m["sq"] if m["sq"] is not None else m["js"]
        out.setdefault(m["key"], html.unescape(value or ""))
    return out


def clean_text(text: str) -> str:
    """Anchor text as a reader sees it: emphasis marks (``*``, ``__``: the parser leaves them in) and code marks
    dropped, spaces collapsed, cut at MAX_TEXT characters; a text that is only a URL says nothing of the page and
    reads as ""."""
    text = _TAG_TEXT.sub(" ", html.unescape(text).replace("`", "").replace("*", "").replace("__", ""))
    text = _SPACES.sub(" ", text).strip()
    if re.fullmatch(r"(?:https?://|www\.)\S*", text):
        return ""
    return text[:MAX_TEXT]
