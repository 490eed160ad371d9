"""atheris target: what a repository says about where its pages are published and how its sections are named
(issue 43): VitePress configs with their rewrites (extractors/vitepress_routes.py), Read the Docs and Sphinx configs
(extractors/sphinx_routes.py), a heading's own id (extractors/markdown.py) and its slug per site generator
(schemas/page_url.py), and a reStructuredText page's includes (extractors/rst_includes.py).

The first input byte picks a mode, the rest is the payload (UTF-8, invalid bytes replaced):
  0  a .vitepress/config.ts                → read_vitepress_config, then the route of a page below its srcDir
  1  a rewrite key and a page path (\\n)    → rewritten
  2  a .readthedocs.yaml, then a conf.py   → readthedocs_builders, read_sphinx_site and the site's routes
  3  a heading                             → heading_id, every generator's heading_anchor
  4  a reStructuredText page               → included_files

Documented outcomes: none of them raises; a config that says nothing readable is None or {}; a route or included
path never climbs out of the repository (no leading ``/`` or ``..``).  Anything else propagates, and atheris
reports it as a crash (a stall shows as libFuzzer's timeout).

    .venv/bin/python fuzz/fuzz_site_configs.py -max_total_time=60 -timeout=5 fuzz/corpus/site_configs
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

with atheris.instrument_imports():
    from trustindex.extractors.markdown import heading_id
    from trustindex.extractors.rst_includes import included_files
    from trustindex.extractors.sphinx_routes import read_sphinx_site, readthedocs_builders
    from trustindex.extractors.vitepress_routes import read_vitepress_config, rewritten
    from trustindex.schemas.page_url import SLUGS, heading_anchor


def inside(path: str) -> bool:
    return not path.startswith(("/", "..")) and "/../" not in path


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, text = data[0] % 5, data[1:].decode("utf-8", "replace")
    if mode == 0:
        site = read_vitepress_config("docs/.vitepress/config.ts", text)
        if site is not None:
            assert inside(site.route("guide/a/b.md")) or site.route("guide/a/b.md") == ""
    elif mode == 1:
        key, _, path = text.partition("\n")
        out = rewritten(path or "a/b.md", ((key, key),))
        assert isinstance(out, str)
    elif mode == 2:
        rtd, _, conf = text.partition("\n---conf---\n")
        builders = readthedocs_builders(rtd)
        assert all(b in ("html", "dirhtml") for b in builders.values())
        site = read_sphinx_site("docs/conf.py", conf, builders)
        if site is not None:
            for rel in ("index.rst", "a/index.rst", "a/b.txt"):
                assert inside(site.route(rel)) or site.route(rel) == ""
    elif mode == 3:
        assert isinstance(heading_id(text), str)
        for generator in SLUGS:
            assert isinstance(heading_anchor(text, generator), str)
    else:
        for path in included_files(text, "docs/a/page.rst"):
            assert inside(path.removeprefix("@site/")), path


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
