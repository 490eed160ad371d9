"""``GET /``: the search page people use, served by ``trustindex serve`` from its own process.

Static files under ``serve/static/`` (package data): the HTML shell, a stylesheet, an icon and two scripts
(``render.js`` draws a response, ``app.js`` holds the state, the token and the calls).  The
page holds no index data: the script asks the same ``/v1/*`` routes an assistant asks, with the same bearer token,
so what a person sees is what the API answers.  That is why these paths stay open when tokens are configured (a
browser cannot send a bearer header when it navigates); the token is typed into the page once, kept in the tab's
session storage and sent as ``Authorization`` on each ``fetch`` — never put in a URL.

Safe by construction: the script builds every element with ``textContent`` (passages, headings, paths and error
lines are untrusted: they come from crawled repositories and clients), only ``http(s)`` links become ``href``, and
the Content-Security-Policy below allows no inline script, no inline style sheet and nothing from another origin,
so markup that slipped through would still run nothing.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

STATIC = Path(__file__).resolve().parent / "static"
# path → (file under static/, media type); the page's whole surface, so the auth wrapper can leave exactly these open
PAGE_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/page/render.js": ("render.js", "text/javascript; charset=utf-8"),
    "/page/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/page/app.css": ("app.css", "text/css; charset=utf-8"),
    "/page/favicon.svg": ("favicon.svg", "image/svg+xml"),
}
PAGE_PATHS = tuple(PAGE_FILES)
# 'self' only: no CDN, no fonts, no inline script or style; connect-src for the /v1 fetches; no framing (the page
# holds a token), no <base> rewriting, forms post back here only.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # the query is in the page's URL: a click on a result's link must not hand it to the docs site
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}


def _read(name: str) -> bytes:
    return (STATIC / name).read_bytes()


def page_routes() -> list[Route]:
    """One GET route per page file; the bytes are read once, when the app is built."""
    routes = []
    for path, (name, media_type) in PAGE_FILES.items():
        body = _read(name)

        async def endpoint(_request: Request, body: bytes = body, media_type: str = media_type) -> Response:
            return Response(body, media_type=media_type, headers=PAGE_HEADERS)

        routes.append(Route(path, endpoint, methods=["GET"]))
    return routes
