"""What a source's extracted tables depend on, as one key.

If none of these changed, the tables of the last run are reused as they are.
"""

from __future__ import annotations

import hashlib
import json

from trustindex.schemas.config import Identities, LedgerEntry, Source
from trustindex.schemas.policy import Policy

# bump when an extractor's output changes for the same bytes (3: evidence_class; 4: content_risk; 5: page_kind;
# 6: an agent plugin's README is agent instructions; 7: ai_written, a page's disclosure that a model wrote it;
# 8: content-risk rules for tool-call markup, forged result headers, credential requests and deceptive links, and
# HTML comments left out of the served text;
# 9: TypeDoc pages' package and version, a compatibility table's family glob;
# 10: a page's route status, the partials it renders, its creation date, blog posts' site URLs;
# 11: links, each page's links and the site's navigation, resolved to pages;
# 12: a heading's MDX comment id `{/*id*/}` is no part of its text;
# 13: reStructuredText pages chunked by their sections, with Sphinx's deprecated directive, not as line windows;
# 14: a reStructuredText page's links (Sphinx's :doc:, :ref: and Python domain roles, hyperlinks) and the names it
# defines for them; a Markdown link to a .rst page names it;
# 15: a changelog (CHANGELOG.md, CHANGES.rst, HISTORY.md, NEWS, change fragments) is its own page kind, no longer
# release notes;
# 16: a heading's attribute list as MkDocs writes it, `{ #id }` or `{: #id .class }`, is no part of its text; a
# release-notes page of 3 or more releases (FastAPI's release-notes.md) is a changelog; each page's language; a
# Sphinx project's pages in a suffix of its own, conf.py's source_suffix (Django's .txt), are reStructuredText;
# 17: a heading's backslash-escaped characters are themselves, not markup ("Map\<key_type, value_type>" read
# "Map\"); an HTML comment whose words are only an address is no hidden prose;
# 18: a VitePress site's pages are routed by its .vitepress/config.* (srcDir, cleanUrls, srcExclude);
# 19: each passage's section anchor (chunks.anchor): the id its heading sets, else its site generator's slug;
# 20: a Sphinx project's pages are routed (conf.py's folder, the builder .readthedocs.yaml names), sections at
# docutils' ids;
# 21: a reStructuredText page's `.. include::` files are cited at that page, as an MDX partial is; a link may omit
# a page's own suffix (Django's :doc:`topics/http/urls` names topics/http/urls.txt); a VitePress config's literal
# rewrites route its pages;
# 22: a heading's explicit id is no word of it to the line readers either (a deprecated section's reason quoted
# `{ #alternative-events-deprecated }`, and react.dev's `## Deprecations {/*deprecations*/}` was no deprecations
# section);
# 23: TypeScript's variance annotations (`interface I<in out C, out R>`) and `g<typeof import("m")>()`, which
# tree-sitter-typescript 0.23.2 lacks, no longer break the parse, and `export declare namespace N` / `function` /
# `const` are named symbols (Effect-style code and mocked tests: 41 of the organisation's 1,996 TypeScript files
# chunk differently, 63 more chunks named, 8 false parse warnings gone))
EXTRACTOR_VERSION = "23"


def source_key(source: Source, commit: str, ids: Identities, ledger: list[LedgerEntry], policy: Policy) -> str:
    """The key of a source's tables: its commit and its context."""
    ctx = context_key(source, ids, ledger, policy)
    return hashlib.sha256(f"{ctx}\0{commit}".encode()).hexdigest()[:20]


def context_key(source: Source, ids: Identities, ledger: list[LedgerEntry], policy: Policy) -> str:
    """Everything but the commit: tables of another commit with the same context can be carried forward."""
    relevant = {
        "extractor": EXTRACTOR_VERSION,
        "source": source.config_sha256,
        "publishers": sorted((p.id, p.tier, p.name) for p in ids.publishers.values()),
        "people": sorted(
            (p.name, p.publisher, sorted(p.emails), sorted(p.signing_keys), sorted(p.gpg_keys)) for p in ids.people
        ),
        # the keys git verifies against: another key can change a verification's class
        "platforms": sorted(
            (p.name, p.committer_email, sorted(p.gpg_keys), sorted(p.signing_keys), sorted(p.attests))
            for p in ids.platforms
        ),
        "ledger": sorted((e.path, e.commit, e.verifier, e.method, e.note) for e in ledger if e.source == source.name),
        "policy": {k: policy.to_dict()[k] for k in ("ingest", "freshness", "version")}
        | {"deprecation_paths": policy.deprecation.path_patterns},
    }
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()[:20]
