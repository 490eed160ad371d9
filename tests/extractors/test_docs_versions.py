"""extractors.docs_versions: Docusaurus versioned docs, labels, banners, legacy rule."""

import pytest

from tests.kits.realdata import REAL_DOCS, needs_real_docs
from trustindex.extractors.docs_versions import (
    docs_config_files,
    docs_version_deprecations,
    docs_version_targets,
    load_docs_versions,
)
from trustindex.schemas.docs_versions import names_of, superseded_by
from trustindex.schemas.versions import ConstraintSet

CORPUS = REAL_DOCS

# The shape of midnight-docs' docusaurus.config.js (plugin "main", lastVersion "current", labels v1 and
# "v0 (Legacy)"), with the traps a regex reader meets: comments, URLs holding "//", a method whose body has
# braces and commas, a commented-out plugin, an unversioned plugin, `docs:` under themeConfig.
MIDNIGHT_LIKE = b"""// @ts-check
require("dotenv").config();
/** @type {import('@docusaurus/types').Config} */
const config = {
  url: "https://docs.example.org",
  plugins: [
    // MAIN DOCS
    [
      "@docusaurus/plugin-content-docs",
      {
        id: "main",
        path: "docs",
        routeBasePath: "/",
        lastVersion: "current",
        versions: {
          current: {
            label: "v1",
          },
          "0.0.0": {
            label: "v0 (Legacy)",
          },
        },
        editUrl: "https://github.com/org/docs/edit/main/",
        async sidebarItemsGenerator({defaultSidebarItemsGenerator, ...args}) {
          const items = await defaultSidebarItemsGenerator(args);
          return items.map((item) => ({ ...item, label: "x" }));
        },
      },
    ],
    // [
    //   "@docusaurus/plugin-content-docs",
    //   { id: "compact", path: "compact", versions: { current: { label: "nope" } } },
    // ],
    [
      "@docusaurus/plugin-content-docs",
      { id: "apis", path: "api-reference", routeBasePath: "api-reference" },
    ],
  ],
  presets: [["classic", { docs: false, blog: false }]],
  themeConfig: { docs: { sidebar: { hideable: true } } },
};
module.exports = config;
"""
MIDNIGHT_PATHS = [
    "docusaurus.config.js",
    "main_versions.json",
    "docs/index.mdx",
    "docs/_develop/x.md",
    "main_versioned_docs/version-0.0.0/getting-started/create-mn-app.mdx",
    "api-reference/ledger/README.md",
    "blog/2025-07-11-post.mdx",
    "README.md",
]
MIDNIGHT_FILES = {"docusaurus.config.js": MIDNIGHT_LIKE, "main_versions.json": b'[\n  "0.0.0"\n]\n'}


@pytest.mark.parametrize(
    "path, label, version, legacy",
    [
        ("docs/index.mdx", "v1", "current", False),
        ("docs/_develop/x.md", "v1", "current", False),
        ("main_versioned_docs/version-0.0.0/getting-started/create-mn-app.mdx", "v0 (Legacy)", "0.0.0", True),
        ("api-reference/ledger/README.md", None, None, None),
        ("blog/2025-07-11-post.mdx", None, None, None),
        ("README.md", None, None, None),
    ],
)
def test_midnight_layout(path, label, version, legacy):
    dv = load_docs_versions(MIDNIGHT_PATHS, MIDNIGHT_FILES)
    assert dv.warnings == []
    got = dv.version_of(path)
    assert (got and (got.label, got.version, got.legacy)) == (label and (label, version, legacy))


def test_targets_and_deprecations():
    dv = load_docs_versions(MIDNIGHT_PATHS, MIDNIGHT_FILES)
    [cur] = docs_version_targets("docs/index.mdx", dv)
    assert (cur.component, cur.constraint, cur.origin) == ("docs", "current", "docs_folder")
    assert ConstraintSet.from_json(cur.intervals) == ConstraintSet.label("current")
    assert names_of(cur.intervals) == ("current", ["v1", "latest"])
    [old] = docs_version_targets("main_versioned_docs/version-0.0.0/a.md", dv)
    assert old.constraint == "0.0.0" and "v0 (Legacy)" in old.detail
    assert names_of(old.intervals) == ("0.0.0", ["v0 (Legacy)"])
    assert docs_version_deprecations("docs/index.mdx", dv) == []
    [dep] = docs_version_deprecations("main_versioned_docs/version-0.0.0/a.md", dv)
    assert (dep.scope, dep.marker) == ("document", "docs_version") and "Legacy" in dep.reason
    assert dep.reason.startswith("v0 (Legacy): unmaintained docs version; current is v1")
    assert superseded_by(dep.reason) is None  # docs/a.md is not in MIDNIGHT_PATHS
    [dep] = docs_version_deprecations("main_versioned_docs/version-0.0.0/getting-started/create-mn-app.mdx", dv)
    assert superseded_by(dep.reason) is None
    with_current = load_docs_versions(MIDNIGHT_PATHS + ["docs/getting-started/create-mn-app.md"], MIDNIGHT_FILES)
    [dep] = docs_version_deprecations(
        "main_versioned_docs/version-0.0.0/getting-started/create-mn-app.mdx", with_current
    )
    assert superseded_by(dep.reason) == "docs/getting-started/create-mn-app.md"
    assert docs_version_targets("blog/x.md", dv) == []


DEFAULT_TS = b"""import type {Config} from '@docusaurus/types';
const config: Config = {
  presets: [
    [
      'classic',
      {
        docs: {
          lastVersion: '2.1',
          versions: {
            '3.0': {label: 'Next', banner: 'unreleased'},
            '1.0': {label: `Old ${x}`},
            '0.9': {banner: 'none'},
          },
        },
      } satisfies Preset.Options,
    ],
  ],
};
export default config;
"""
DEFAULT_PATHS = [
    "website/docusaurus.config.ts",
    "website/versions.json",
    "website/docs/a.md",
    "website/versioned_docs/version-3.0/a.md",
    "website/versioned_docs/version-2.1/a.md",
    "website/versioned_docs/version-1.0/a.md",
    "website/versioned_docs/version-0.9/a.md",
    "website/versioned_docs/version-0.1/a.md",
]
DEFAULT_FILES = {"website/docusaurus.config.ts": DEFAULT_TS, "website/versions.json": b'["3.0", "2.1", "1.0", "0.9"]'}


@pytest.mark.parametrize(
    "path, label, legacy, reason",
    [
        ("website/docs/a.md", "current", False, "no label configured"),
        ("website/versioned_docs/version-3.0/a.md", "Next", False, "banner 'unreleased'"),
        ("website/versioned_docs/version-2.1/a.md", "2.1", False, "not older than lastVersion"),
        ("website/versioned_docs/version-1.0/a.md", "1.0", True, "older than lastVersion '2.1'"),
        ("website/versioned_docs/version-0.9/a.md", "0.9", False, "banner 'none'"),
        ("website/versioned_docs/version-0.1/a.md", "0.1", False, "not listed in versions.json"),
    ],
)
def test_default_plugin_ts_config(path, label, legacy, reason):
    dv = load_docs_versions(DEFAULT_PATHS, DEFAULT_FILES)
    got = dv.version_of(path)
    assert (got.label, got.legacy) == (label, legacy) and reason in got.reason


def test_non_literal_label_is_reported_not_guessed():
    dv = load_docs_versions(DEFAULT_PATHS, DEFAULT_FILES)
    assert any("'1.0'" in w and "not a string literal" in w for w in dv.warnings)


def test_no_config_uses_docusaurus_defaults_and_says_so():
    paths = ["versions.json", "docs/a.md", "versioned_docs/version-2.0/a.md", "versioned_docs/version-1.0/a.md"]
    dv = load_docs_versions(paths, {"versions.json": b'["2.0", "1.0"]'})
    assert dv.version_of("docs/a.md").label == "current"
    old = dv.version_of("versioned_docs/version-1.0/a.md")
    assert old.legacy and "defaults assumed" in old.reason
    assert not dv.version_of("versioned_docs/version-2.0/a.md").legacy
    assert any("no docusaurus config" in w for w in dv.warnings)


@pytest.mark.parametrize("data", [b"{not json", b'{"a": 1}', b"[1, 2]"])
def test_bad_versions_json_warns(data):
    dv = load_docs_versions(["versions.json", "versioned_docs/version-1.0/a.md"], {"versions.json": data})
    assert any("versions.json" in w and "ignored" in w for w in dv.warnings)
    assert "unknown" in dv.version_of("versioned_docs/version-1.0/a.md").reason


def test_unversioned_site_has_no_docs_versions():
    dv = load_docs_versions(
        ["docusaurus.config.js", "docs/a.md"],
        {"docusaurus.config.js": b'module.exports = {presets: [["classic", {docs: {}}]]};'},
    )
    assert dv.version_of("docs/a.md") is None


def test_missing_config_bytes_warn():
    dv = load_docs_versions(["docusaurus.config.js"], {})
    assert dv.warnings == ["docusaurus.config.js: not read"]


def test_docs_config_files():
    assert docs_config_files(MIDNIGHT_PATHS + DEFAULT_PATHS) == [
        "docusaurus.config.js",
        "main_versions.json",
        "website/docusaurus.config.ts",
        "website/versions.json",
    ]


@needs_real_docs
def test_real_corpus_layout():
    paths = [p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()]
    dv = load_docs_versions(paths + ["docusaurus.config.js", "main_versions.json"], MIDNIGHT_FILES)
    legacy = [p for p in paths if (v := dv.version_of(p)) and v.legacy]
    current = [p for p in paths if (v := dv.version_of(p)) and v.label == "v1"]
    assert legacy and all(p.startswith("main_versioned_docs/version-0.0.0/") for p in legacy)
    assert current and all(p.startswith("docs/") for p in current)


def test_preset_options_in_a_jsdoc_type_cast_are_read():
    config = b"""const config = { presets: [[ 'classic', /** @type {import('@docusaurus/preset-classic').Options} */
      ({ docs: { lastVersion: 'current', versions: { current: { label: 'v1' },
         '0.1.0': { label: 'v0 (Legacy)', banner: 'unmaintained' } } } }), ], ], };"""
    paths = ["docusaurus.config.js", "versions.json", "docs/a.md", "versioned_docs/version-0.1.0/a.md"]
    dv = load_docs_versions(paths, {"docusaurus.config.js": config, "versions.json": b'["0.1.0"]'})
    assert dv.version_of("docs/a.md").label == "v1"
    old = dv.version_of("versioned_docs/version-0.1.0/a.md")
    assert old.label == "v0 (Legacy)" and old.legacy


# Two docs plugins (the classic preset's default one and a "compact" plugin) with the options Docusaurus defines:
# versions files per plugin id, path, lastVersion, onlyIncludeVersions, per-version label, path and banner.
TWO_PLUGINS = b"""module.exports = {
  presets: [["classic", { docs: { path: "guides", lastVersion: "2.0",
      onlyIncludeVersions: ["current", "2.0", "1.0"],
      versions: { current: { label: "Next", path: "next", banner: "unreleased" },
                  "2.0": { label: "v2", path: "" }, "1.0": { label: "v1", banner: "none" } } } }]],
  plugins: [["@docusaurus/plugin-content-docs", { id: "compact", path: "compact-docs", routeBasePath: "compact",
      lastVersion: "current",
      versions: { current: { label: "0.30 (latest)" } } }]],
};
"""
TWO_PATHS = [
    "docusaurus.config.js",
    "versions.json",
    "compact_versions.json",
    "guides/intro.md",
    "versioned_docs/version-2.0/intro.md",
    "versioned_docs/version-1.0/intro.md",
    "versioned_docs/version-0.9/intro.md",
    "compact-docs/lang.md",
    "compact_versioned_docs/version-0.29/lang.md",
]
TWO_FILES = {
    "docusaurus.config.js": TWO_PLUGINS,
    "versions.json": b'["2.0", "1.0", "0.9"]',
    "compact_versions.json": b'["0.29"]',
}


@pytest.mark.parametrize(
    "path, version, label, legacy, aliases, reason",
    [
        ("guides/intro.md", "current", "Next", False, ("Next",), "current docs of plugin 'default'"),
        ("versioned_docs/version-2.0/intro.md", "2.0", "v2", False, ("v2", "latest"), "not older than lastVersion"),
        ("versioned_docs/version-1.0/intro.md", "1.0", "v1", False, ("v1",), "banner 'none'"),
        ("versioned_docs/version-0.9/intro.md", "0.9", "0.9", True, (), "left out of onlyIncludeVersions"),
        ("compact-docs/lang.md", "current", "0.30 (latest)", False, ("0.30 (latest)", "latest"), "'compact'"),
        ("compact_versioned_docs/version-0.29/lang.md", "0.29", "0.29", True, (), "older than lastVersion 'current'"),
    ],
)
def test_two_plugins_with_their_own_versions_files(path, version, label, legacy, aliases, reason):
    dv = load_docs_versions(TWO_PATHS, TWO_FILES)
    assert dv.warnings == []
    got = dv.version_of(path)
    assert (got.version, got.label, got.legacy, got.aliases) == (version, label, legacy, aliases)
    assert reason in got.reason


def test_per_version_banner_and_route_path_are_kept():
    dv = load_docs_versions(TWO_PATHS, TWO_FILES)
    cur = dv.version_of("guides/intro.md")
    assert (cur.banner, cur.url_path) == ("unreleased", "next")
    assert dv.version_of("versioned_docs/version-2.0/intro.md").url_path == ""
    old = dv.version_of("compact_versioned_docs/version-0.29/lang.md")
    assert old.reason.startswith("0.29: unmaintained docs version; current is 0.30 (latest)")


def test_a_plugin_versions_file_is_its_own():
    # compact_versions.json missing: the compact plugin's released folder is of unknown status, the default
    # plugin's versions.json does not stand in for it.
    files = {k: v for k, v in TWO_FILES.items() if k != "compact_versions.json"}
    dv = load_docs_versions([p for p in TWO_PATHS if p != "compact_versions.json"], files)
    old = dv.version_of("compact_versioned_docs/version-0.29/lang.md")
    assert not old.legacy and "no compact_versions.json" in old.reason


def test_non_literal_only_include_versions_warns():
    config = b'module.exports = {presets: [["classic", {docs: {onlyIncludeVersions: VERSIONS}}]]};'
    dv = load_docs_versions(
        ["docusaurus.config.js", "versions.json"], {"docusaurus.config.js": config, "versions.json": b"[]"}
    )
    assert any("onlyIncludeVersions" in w for w in dv.warnings)
