"""A passage is cited at its section's id as its site generator gives it (schemas/page_url.py): the id its heading
sets itself, else the generator's slug of the heading's text (github-slugger for Docusaurus, VitePress's and
Python-Markdown's own), recorded per passage at build time (``chunks.anchor``)."""

from __future__ import annotations

import pytest

from tests.kits.gitutil import ingest_files
from trustindex.extractors.markdown import heading_id
from trustindex.schemas.page_url import (
    DOCUSAURUS,
    MKDOCS,
    VITEPRESS,
    heading_anchor,
    passage_page_url,
    section_anchor,
)


@pytest.mark.parametrize(
    ("heading", "docusaurus", "vitepress", "mkdocs"),
    [
        ("app.mount()", "appmount", "app-mount", "appmount"),
        ("What's new in Vue 3?", "whats-new-in-vue-3", "what-s-new-in-vue-3", "whats-new-in-vue-3"),
        ("2.x Migration", "2x-migration", "_2-x-migration", "2x-migration"),
        ("Install the `compact` compiler (v0.23)!", "install-the-compact-compiler-v023", None, None),
        ("Café -- déjà vu", "café----déjà-vu", "cafe-deja-vu", "cafe-deja-vu"),
        ("See [the SDK](https://x.example) docs", "see-the-sdk-docs", "see-the-sdk-docs", "see-the-sdk-docs"),
    ],
)
def test_each_generator_slugs_a_heading_its_own_way(heading, docusaurus, vitepress, mkdocs):
    expected = {DOCUSAURUS: docusaurus, VITEPRESS: vitepress, MKDOCS: mkdocs}
    for generator, slug in expected.items():
        if slug is not None:
            assert heading_anchor(heading, generator) == slug, generator


@pytest.mark.parametrize(
    ("title", "explicit"),
    [
        ("Install {#setup}", "setup"),
        ("Vue.js Privacy Policy {#vue.js-privacy-policy}", "vue.js-privacy-policy"),
        ("Steps { #steps }", "steps"),
        ("Options {: .wide #opts }", "opts"),
        ("Usage {/*usage*/}", "usage"),
        ("A class only {: .wide }", ""),
        ("Map\\<key_type, value_type>", ""),
        ("No id here", ""),
    ],
)
def test_the_id_a_heading_sets_itself(title, explicit):
    assert heading_id(title) == explicit


def test_a_recorded_anchor_is_cited_and_an_older_snapshot_reads_the_docusaurus_slug():
    assert section_anchor(["Page", "app.mount()"], "", VITEPRESS) == "app-mount"
    assert section_anchor(["Page", "app.mount()"], "mount", VITEPRESS) == "mount"
    assert section_anchor([], "", VITEPRESS) == ""
    assert passage_page_url("https://s/p", ["Page", "app.mount()"], anchor="app-mount") == "https://s/p#app-mount"
    assert passage_page_url("https://s/p", ["Page", "app.mount()"]) == "https://s/p#appmount"  # no column: as before
    assert passage_page_url("https://s/p", ["Page"], anchor="page") == "https://s/p"  # the title: the page itself


# Each section long enough (~250 tokens) to be a passage of its own
BODY = "Its own words. " * 80


def page(*sections: str) -> str:
    return "".join(f"{heading}\n\n{BODY}\n\n" for heading in sections)


VITEPRESS_FILES = {
    ".vitepress/config.ts": "export default defineConfig({ srcDir: 'src' })\n",
    "src/api/application.md": page(
        "# Application API {#application-api}",
        "## createApp()",
        "## app.mount() {#app-mount}",
        "## app.unmount()",
        "## Vue.js Privacy {#vue.js-privacy}",
    ),
}
MKDOCS_FILES = {
    "mkdocs.yml": "site_name: X\n",
    "docs/tutorial/params.md": page(
        "# Path Parameters { #path-parameters }", "## Path() and Query() { #path-and-query }", "## Café & co"
    ),
}
DOCUSAURUS_FILES = {"docs/guide.md": page("# Guide", "## app.mount()", "## Set up {#setup}")}


@pytest.mark.parametrize(
    ("files", "site", "expected"),
    [
        (
            VITEPRESS_FILES,
            "https://vue.example",
            {
                "createApp()": "https://vue.example/api/application.html#createapp",
                "app.mount()": "https://vue.example/api/application.html#app-mount",
                "app.unmount()": "https://vue.example/api/application.html#app-unmount",
                "Vue.js Privacy": "https://vue.example/api/application.html#vue.js-privacy",
            },
        ),
        (
            MKDOCS_FILES,
            "https://fastapi.example",
            {
                "Path() and Query()": "https://fastapi.example/tutorial/params/#path-and-query",
                "Café & co": "https://fastapi.example/tutorial/params/#cafe-co",
            },
        ),
        (
            DOCUSAURUS_FILES,
            "https://docs.example",
            {
                "app.mount()": "https://docs.example/docs/guide#appmount",
                "Set up": "https://docs.example/docs/guide#setup",
            },
        ),
    ],
)
def test_a_built_passage_records_its_generators_anchor(tmp_path, files, site, expected):
    run = ingest_files(tmp_path, files, "site", f'site_url = "{site}"\n')
    page_url = {r["doc_id"]: r["page_url"] for r in run.tables["documents"].to_pylist()}
    cited = {
        c["heading_path"][-1]: passage_page_url(page_url[c["doc_id"]], c["heading_path"], anchor=c["anchor"])
        for c in run.tables["chunks"].to_pylist()
        if len(c["heading_path"]) > 1
    }
    assert cited == expected
