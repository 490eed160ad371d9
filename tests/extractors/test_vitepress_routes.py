"""A VitePress site's pages are cited where it publishes them (extractors/vitepress_routes.py): the pages of its
``srcDir`` at the site's root (``.html``, or clean URLs), its ``srcExclude`` unrouted, the rest off the site; the
config is TypeScript that VitePress runs, read here as literals only."""

from __future__ import annotations

from tests.kits.gitutil import ingest_files
from trustindex.extractors.docs_routes import load_docs_routes
from trustindex.extractors.vitepress_routes import read_vitepress_config, rewritten

CONFIG = """import { defineConfigWithTheme } from 'vitepress'
import baseConfig from '@vue/theme/config'
// the sidebar is computed: not read
const sidebar = makeSidebar()

export default defineConfigWithTheme<ThemeConfig>({
  extends: baseConfig,
  srcDir: 'src',
  srcExclude: ['tutorial/**/description.md'],
  themeConfig: { sidebar },
})
"""
FILES = {
    ".vitepress/config.ts": CONFIG,
    "src/index.md": "# Vue\n\nThe progressive framework.\n",
    "src/guide/essentials/computed.md": "# Computed Properties {#computed}\n\n## Writable Computed\n\nA setter.\n",
    "src/guide/index.md": "# Guide\n\nStart here.\n",
    "src/tutorial/src/step-1/description.md": "# Getting started\n\nRendered inside the tutorial.\n",
    "README.md": "# vuejs.org\n\nThe docs' source.\n",
}


def test_routes_of_a_vitepress_site():
    routes = load_docs_routes(list(FILES), {".vitepress/config.ts": CONFIG.encode()})
    got = {p: (r.status, r.route) for p in FILES if p.endswith(".md") for r in [routes.resolve(p)]}
    assert got == {
        "src/index.md": ("routed", ""),
        "src/guide/essentials/computed.md": ("routed", "guide/essentials/computed.html"),
        "src/guide/index.md": ("routed", "guide/"),
        "src/tutorial/src/step-1/description.md": ("unrouted", None),
        "README.md": ("off_site", None),
    }
    clean = read_vitepress_config("docs/.vitepress/config.mts", "export default { cleanUrls: true }")
    assert clean is not None and (clean.root, clean.src, clean.clean_urls) == ("docs/", "docs/", True)
    computed = read_vitepress_config(".vitepress/config.js", "export default defineConfig({ cleanUrls: isProd })")
    assert computed is not None and computed.clean_urls is False  # computed when VitePress runs: the default
    assert read_vitepress_config(".vitepress/config.ts", "export default { srcDir: '../../elsewhere' }") is None


def test_a_vitepress_page_is_cited_at_its_published_url(tmp_path):
    run = ingest_files(tmp_path, FILES, "vue", 'site_url = "https://vue.example"\n')
    docs = {r["path"]: (r["route"], r["page_url"]) for r in run.tables["documents"].to_pylist()}
    assert docs["src/guide/essentials/computed.md"] == ("routed", "https://vue.example/guide/essentials/computed.html")
    assert docs["src/tutorial/src/step-1/description.md"] == ("unrouted", "")
    assert docs["README.md"] == ("off_site", "")
    report = {r["path"]: (r["status"], r["rule"]) for r in run.tables["ingest_report"].to_pylist()}
    assert report[".vitepress/config.ts"] == ("skipped", "not_included")  # read as evidence only


def test_rewrites_publish_a_page_at_another_path():
    config = """export default defineConfig({
  // the English pages at the root, the Chinese under zh/; numbered chapters without their numbers
  rewrites: {
    'en/:rest*': ':rest*',
    'packages/:pkg/src/(.*)': ':pkg/index.md',
    '01-preface/index.md': 'preface/index.md',
  },
  cleanUrls: true,
})
"""
    site = read_vitepress_config(".vitepress/config.ts", config)
    assert site is not None
    routes = {
        rel: site.route(rel)
        for rel in (
            "en/guide/intro.md",
            "en/index.md",
            "zh/guide/intro.md",
            "packages/ui/src/ui.md",
            "01-preface/index.md",
        )
    }
    assert routes == {
        "en/guide/intro.md": "guide/intro",
        "en/index.md": "",
        "zh/guide/intro.md": "zh/guide/intro",  # no rewrite matches: as written
        "packages/ui/src/ui.md": "ui/",
        "01-preface/index.md": "preface/",
    }
    computed = read_vitepress_config(".vitepress/config.ts", "export default { rewrites(id) { return id } }")
    assert computed is not None and computed.rewrites == ()  # a function is code: not read


def test_a_rewrite_key_is_matched_by_whole_segments_so_hostile_keys_cannot_stall_a_build():
    # a regex of many greedy groups would backtrack for as long as the path has ways to split (a config is
    # untrusted input): a parameter must fill a whole segment, and at most one may take many segments
    hostile = (("".join(f":p{i}*-" for i in range(12)) + "x", ":p0"), (":a*/:b*/x", ":a"), (":a?/x.md", ":a"))
    path = "a-" * 40 + "y.md"
    assert rewritten(path, hostile) == path  # none of those keys is read
    assert rewritten("/".join(["a"] * 500) + ".md", (("/".join(f":p{i}" for i in range(50)), "x"),)) != "x"
    assert rewritten("docs/v2/api/index.md", ((":section/v2/:rest+", ":section/:rest+"),)) == "docs/api/index.md"
    assert rewritten("docs/v2/index.md", ((":section/v2/:rest+/index.md", "x"),)) == "docs/v2/index.md"  # + wants one
