"""Arrow schemas of every table: the one place their columns are defined.

Warehouse writes these as Parquet; the snapshot carries them; query reads them;
the DuckDB catalog exposes them as views.  ``doc_id`` and ``chunk_id`` are
content-derived (see ``doc_id_of`` / ``chunk_id_of``) so the same input gives
the same ids.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa

SCHEMA_VERSION = "1"

_ts = pa.timestamp("s", tz="UTC")


def doc_id_of(source: str, path: str) -> str:
    return hashlib.sha256(f"{source}\0{path}".encode()).hexdigest()[:20]


def chunk_id_of(source: str, path: str, start_line: int, end_line: int, content_sha256: str, ordinal: int) -> str:
    """Hash of source + path + content span (DESIGN.md: Tables).

    The ordinal keeps ids unique where a single over-long line is cut into
    several windows with the same line span (and possibly the same text).
    """
    key = f"{source}\0{path}\0{start_line}-{end_line}\0{content_sha256}\0{ordinal}"
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


DOCUMENTS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("source", pa.string()),
        ("repo", pa.string()),
        ("commit", pa.string()),
        ("path", pa.string()),
        ("kind", pa.string()),
        ("content_sha256", pa.string()),
        ("size", pa.int64()),
        ("last_modified", _ts),
        ("last_modified_commit", pa.string()),
        ("last_substantive_change", _ts),
        ("last_substantive_commit", pa.string()),
        ("front_matter", pa.string()),  # JSON, as written: evidence only, never authority
        ("url", pa.string()),
        # the published page (source site_url + the site's Docusaurus routing); "" when it has none
        ("page_url", pa.string()),
        # what the page is (schemas.page_kinds.PAGE_KINDS, extractors/page_kind.py) and the rule that said so;
        # a snapshot written before these columns reads as "unknown"
        ("page_kind", pa.string()),
        ("page_kind_reason", pa.string()),
        ("warnings", pa.list_(pa.string())),
        # whether the docs site serves the page (schemas.page_routes: routed, unrouted, off_site) and the rule that
        # said so (extractors/docs_routes.py); a snapshot written before these columns reads the "_" path rule
        ("route", pa.string()),
        ("route_reason", pa.string()),
        # the Markdown files the page renders (MDX import, extractors/mdx_includes.py), and, for such a file, the
        # routed page of the same source that renders it ("" when none; ingest/includes.py): cited at its page_url
        ("includes", pa.list_(pa.string())),
        ("part_of", pa.string()),
        # the date of the first commit that touched the file (its creation): a copy across sources yields to the
        # earlier original (warehouse/copies.py)
        ("created", _ts),
        # the language of the page's prose, ISO 639-1 ("" when it has too little prose, or is code;
        # extractors/page_language.py): a page in another language than most of its source's yields at query time
        ("language", pa.string()),
    ]
)

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("source", pa.string()),
        ("path", pa.string()),
        ("ordinal", pa.int32()),
        ("heading_path", pa.list_(pa.string())),
        ("symbol_path", pa.string()),
        ("start_line", pa.int32()),
        ("end_line", pa.int32()),
        ("text", pa.string()),
        ("content_sha256", pa.string()),  # of the embedded text: the embedding cache key
        ("token_count", pa.int32()),
        # the id of the passage's own section on its page: the id its heading sets, else its site generator's slug
        # of the heading ("" under no heading; schemas/page_url.py); a snapshot written before this column cites
        # the Docusaurus slug of the heading's text
        ("anchor", pa.string()),
    ]
)

ATTRIBUTION = pa.schema(
    [
        ("doc_id", pa.string()),
        ("publisher", pa.string()),
        ("publisher_name", pa.string()),
        ("tier", pa.string()),
        ("origin", pa.string()),  # "source" | "publisher_override:<glob>"
        ("author_name", pa.string()),
        ("author_email", pa.string()),
        ("author_publisher", pa.string()),
    ]
)

VERIFICATIONS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("verifier", pa.string()),
        ("verifier_email", pa.string()),
        ("publisher", pa.string()),
        ("tier", pa.string()),
        ("method", pa.string()),
        ("commit", pa.string()),
        ("date", _ts),
        ("stale", pa.bool_()),
        ("detail", pa.string()),
        ("evidence_class", pa.string()),  # one of EVIDENCE_CLASSES
    ]
)

# What a verification link rests on.  ``authenticated``: a signature git verified against a key the operator lists
# (a person's, or a platform's vouching for what it recorded); ``claimed``: what the repository says (a trailer,
# an unsigned merge, an author field); ``operator``: the operator's ledger.
AUTHENTICATED, CLAIMED, OPERATOR = "authenticated", "claimed", "operator"
EVIDENCE_CLASSES = (AUTHENTICATED, CLAIMED, OPERATOR)

VERSION_TARGETS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),  # null chunk_id: the whole document
        ("component", pa.string()),
        ("constraint", pa.string()),
        ("intervals", pa.string()),
        ("origin", pa.string()),
        ("status", pa.string()),
        ("detail", pa.string()),
    ]
)

DEPRECATIONS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),
        ("scope", pa.string()),
        ("reason", pa.string()),
        ("marker", pa.string()),
    ]
)

# What a passage says to its reader that may harm them or the assistant reading it (extractors/content_risk.py):
# one row per finding; lines in the file, characters in the passage as served (hidden characters removed).
CONTENT_RISK = pa.schema(
    [
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),
        ("kind", pa.string()),  # schemas.content_risk.KINDS
        ("rule", pa.string()),
        ("reason", pa.string()),
        ("start_line", pa.int32()),
        ("end_line", pa.int32()),
        ("start_char", pa.int32()),
        ("end_char", pa.int32()),
        ("detail", pa.string()),
    ]
)

INGEST_REPORT = pa.schema(
    [
        ("source", pa.string()),
        ("commit", pa.string()),
        ("path", pa.string()),
        ("status", pa.string()),  # ingested | skipped | failed
        ("rule", pa.string()),
        ("stage", pa.string()),
        ("reason", pa.string()),
    ]
)

SOURCES = pa.schema(
    [
        ("source", pa.string()),
        ("repo", pa.string()),
        ("ref", pa.string()),
        ("commit", pa.string()),
        ("commit_date", pa.string()),  # the commit's committer date, ISO 8601 UTC: how current the source is
        ("publisher", pa.string()),
        ("tier", pa.string()),
        ("config_sha256", pa.string()),
        ("status", pa.string()),
        ("error", pa.string()),
    ]
)

# One row per compile check of a passage's code (flows.compile_step): cached by (text_sha256, compiler identity),
# so a text is compiled once per compiler.  ``reason``: the compiler's first error line, or why the sandbox stopped
# it; ``kind``: schemas.compilers KIND_*; a null chunk_id is the whole document (a .compact file).
COMPILE_CHECKS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),
        ("source", pa.string()),
        ("path", pa.string()),
        ("kind", pa.string()),
        ("text_sha256", pa.string()),
        ("compiler_version", pa.string()),
        ("language_version", pa.string()),
        ("outcome", pa.string()),  # schemas.compilers.OUTCOMES
        ("reason", pa.string()),
        ("seconds", pa.float64()),
    ]
)

# One row per passage that copies a passage of another source (warehouse/copies.py, written at build over every
# source, only when there is a copy): ``copy_of`` the original's chunk id (higher attribution tier, then the
# document first committed earlier); ``similarity`` the Jaccard similarity of their normalised word shingles;
# ``method`` identical_normalised_text or minhash_jaccard.
COPIES = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("copy_of", pa.string()),
        ("similarity", pa.float64()),
        ("method", pa.string()),
    ]
)

# The site's links (schemas/links.py): one row per link a page or the site's navigation writes, resolved to the page
# it names where it names one.  ``doc_id``/``chunk_id``: the page and passage holding it (null for a sidebar or a
# _category_ label; ``path`` is then that file); ``fragment``: the "#section" it names (it may name the passage).
LINKS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),
        ("source", pa.string()),
        ("path", pa.string()),
        ("line", pa.int32()),
        ("kind", pa.string()),  # schemas.links.LINK_KINDS
        ("text", pa.string()),  # the anchor text (or the sidebar label) as a reader sees it
        ("target", pa.string()),  # as written
        ("status", pa.string()),  # schemas.links.LINK_STATUSES
        ("target_source", pa.string()),
        ("target_path", pa.string()),
        ("target_doc_id", pa.string()),
        ("fragment", pa.string()),
        ("resolved_by", pa.string()),  # schemas.links BY_*; "" when unresolved
    ]
)

# Tables whose rows each belong to one document (they carry its doc_id; a link of the site's navigation has none).
PER_DOCUMENT_TABLES = (
    "chunks",
    "attribution",
    "verifications",
    "version_targets",
    "deprecations",
    "content_risk",
    "links",
)
# What ingesting a document writes: its documents row and its per-document rows.
DOCUMENT_TABLES = ("documents", *PER_DOCUMENT_TABLES)
# One source's tables at one commit: every ingested document's rows and the account of every tree entry.
SOURCE_TABLES = (*DOCUMENT_TABLES, "ingest_report")

TABLES: dict[str, pa.Schema] = {
    "documents": DOCUMENTS,
    "chunks": CHUNKS,
    "attribution": ATTRIBUTION,
    "verifications": VERIFICATIONS,
    "version_targets": VERSION_TARGETS,
    "deprecations": DEPRECATIONS,
    "content_risk": CONTENT_RISK,
    "links": LINKS,
    "ingest_report": INGEST_REPORT,
    "sources": SOURCES,
    "compile_checks": COMPILE_CHECKS,
    "copies": COPIES,
}


def empty_table(name: str) -> pa.Table:
    return TABLES[name].empty_table()


def table_from_rows(name: str, rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=TABLES[name])
