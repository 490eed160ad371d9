"""Where a person reads a file of a source at a commit: the source's ``web_url`` template (issue 29 item 3).

A template names the file and the passage's lines with placeholders: ``{name}`` (the source's name), ``{commit}``,
``{path}`` (URL-quoted), ``{start}`` and ``{end}`` (the passage's first and last line).  Without one, the template
is derived from a remote URL of a host whose layout is known (GitHub, GitLab, Codeberg/Gitea, Bitbucket); any
other http(s) remote gets GitHub's layout, as before the template existed; a local path gets none (its hits then
have no ``url`` unless the operator gives one, e.g. in ``[defaults]`` with ``{name}``).

Ingest fills everything but the lines into the document's ``url`` (the lines differ per passage); the query side
fills the lines (:func:`cite_lines`).  A URL stored before templates has no line placeholders and gets the
``#L{start}-L{end}`` suffix, as it always did.
"""

from __future__ import annotations

import re
import string
from urllib.parse import quote

PLACEHOLDERS = ("name", "commit", "path", "start", "end")
LINES = "#L{start}-L{end}"  # GitHub's (and the legacy) line anchor
_OPEN = {"start": "{start}", "end": "{end}"}  # left in the stored URL for the query side

# host -> the template after https://host/owner/repo
_HOSTS = {
    "github.com": "/blob/{commit}/{path}#L{start}-L{end}",
    "gitlab.com": "/-/blob/{commit}/{path}#L{start}-{end}",
    "codeberg.org": "/src/commit/{commit}/{path}#L{start}-L{end}",
    "bitbucket.org": "/src/{commit}/{path}#lines-{start}:{end}",
}
_SCP = re.compile(r"^[\w.-]+@([\w.-]+):(.+?)/?$")  # git@github.com:owner/repo.git
_URL = re.compile(r"^(?:https?|ssh|git)://(?:[^@/]+@)?([\w.-]+)(?::\d+)?/(.+?)/?$")


def template_error(template: str) -> str | None:
    """What is wrong with a template ("" when nothing): it must be http(s), name the path, use only PLACEHOLDERS."""
    if not re.match(r"^https?://[^/\s{}]+", template):
        return f"expected an http(s) URL template, got {template!r}"
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    except ValueError as e:
        return f"{template!r} is not a valid template: {e}"
    unknown = sorted(fields - set(PLACEHOLDERS))
    if unknown:
        return f"unknown placeholder {{{unknown[0]}}} (known: {', '.join('{' + p + '}' for p in PLACEHOLDERS)})"
    if "path" not in fields:
        return f"{template!r} does not name the file: it needs {{path}}"
    return None


def derived_template(remote: str) -> str:
    """The template for a remote URL ("" when no layout is known: a local path, an unknown scheme)."""
    m = _SCP.match(remote) or _URL.match(remote)
    if m is None:
        return ""
    host, repo = m.group(1).lower(), m.group(2).removesuffix(".git")
    if host in _HOSTS:
        return f"https://{host}/{repo}{_HOSTS[host]}"
    if remote.startswith(("https://", "http://")):  # an unknown host over http(s): GitHub's layout, as before
        return f"{remote.removesuffix('/').removesuffix('.git')}/blob/{{commit}}/{{path}}{LINES}"
    return ""


def file_url(template: str, name: str, commit: str, path: str) -> str:
    """The file's URL with the line placeholders still open ("" without a template).  GitHub's line suffix is
    left off: the query side appends it to any URL without placeholders (the form stored before templates)."""
    if not template:
        return ""
    url = template.format(name=quote(name), commit=commit, path=quote(path, safe="/"), **_OPEN)
    return url.removesuffix(LINES)


def cite_lines(url: str, start: int, end: int) -> str:
    """A document's stored URL with a passage's lines."""
    if "{start}" in url or "{end}" in url:
        return url.replace("{start}", str(start)).replace("{end}", str(end))
    return f"{url}#L{start}-L{end}"


def document_url(url: str) -> str:
    """A document's stored URL without a line range (a whole-file link): the anchor that holds the placeholders
    is dropped."""
    head, sep, anchor = url.partition("#")
    if sep and ("{start}" in anchor or "{end}" in anchor):
        return head
    return url.replace("{start}", "1").replace("{end}", "1")
