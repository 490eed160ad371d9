"""Build one source's tables at one commit: crawl, extract, attach evidence.

This is the normalize stage: bytes read from git objects go through the pure
extractors; attribution, freshness and verification evidence is attached from
the operator's configuration and the source's history.  Every tree entry ends
in ``ingest_report`` as ingested, skipped (with its rule) or failed (with the
stage and error).  One bad file never fails the source.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from trustindex.crawl.git import (
    Mirror,
    TreeEntry,
    commit_time,
    ensure_mirror,
    list_tree,
    mirror_path,
    read_blob,
    resolve_ref,
)
from trustindex.crawl.history import file_histories, read_log
from trustindex.crawl.signature_cache import CheckCount, cache_file
from trustindex.extractors.base import ExtractionError
from trustindex.extractors.freshness import bulk_limit
from trustindex.extractors.static_sites import is_site_config
from trustindex.extractors.verification import merge_owners
from trustindex.ingest.context import SourceContext
from trustindex.ingest.dispatch import RESTRUCTUREDTEXT, extractor_for, kind_of
from trustindex.ingest.evidence import SourceEvidence, docs_config_evidence, sphinx_sources
from trustindex.ingest.files import skip_rule_for_bytes, skip_rule_for_entry
from trustindex.ingest.includes import attach_partials, reanchor_partials
from trustindex.ingest.incremental import Previous, carried_rows, plan
from trustindex.ingest.links import navigation_files, navigation_rows, resolve_links
from trustindex.ingest.rows import Row, document_rows, empty_rows
from trustindex.ingest.vouches import ledger_links, signature_evidence
from trustindex.runtime import progress
from trustindex.schemas.config import Identities, LedgerEntry, Source
from trustindex.schemas.policy import Policy
from trustindex.schemas.tables import table_from_rows

log = logging.getLogger(__name__)


@dataclass
class SourceResult:
    source: str
    commit: str
    tables: dict[str, pa.Table] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    note: str = ""
    signature_checks: CheckCount = field(default_factory=CheckCount)  # what git verified now, what was cached


@dataclass(frozen=True)
class IngestRun:
    """What this run brings for the source: ``commit`` (None: the source's ref), ``previous`` (the last build's
    tables, for an incremental build), ``repo`` (the mirror when this run has fetched it already; fetched here
    when None) and ``on_chunks`` (called with each extracted document's chunk rows as soon as they exist: the
    build's embedding pipeline, encoder.pipeline; the tables are the same with or without it)."""

    commit: str | None = None
    previous: Previous | None = None
    repo: Mirror | None = None
    on_chunks: Callable[[list[Row]], None] | None = None


def ingest_source(
    source: Source,
    data_dir: Path,
    ids: Identities,
    ledger: list[LedgerEntry],
    policy: Policy,
    count_tokens: Callable[[str], int],
    run: IngestRun = IngestRun(),
) -> SourceResult:
    """The source's tables at ``run.commit`` (else its ref), every tree entry in its ingest report."""
    repo = (
        run.repo
        if run.repo is not None
        else ensure_mirror(source.url, mirror_path(data_dir, source.name), source.blob_limit, source.follows_head)
    )
    commit = run.commit or resolve_ref(repo, source.ref, source.url)
    entries = list_tree(repo, commit)
    commits = read_log(repo, commit)
    inc = plan(repo, run.previous, commit, commits)
    report: list[Row] = []
    # a Sphinx project's own suffixes (Django's .txt pages) are read where the include reads its .rst pages
    sphinx, sphinx_configs = sphinx_sources(repo, entries, source)
    include, exclude = sphinx.widen(source.include, source.exclude)
    reading = replace(source, include=include, exclude=exclude)
    blobs, included = _read_tree(repo, reading, commit, entries, inc.carry, inc.ingested, policy, report)
    ctx = SourceContext(
        source=source,
        commit=commit,
        repo=repo,
        ids=ids,
        policy=policy,
        count_tokens=count_tokens,
        head_time=datetime.fromtimestamp(commit_time(repo, commit), UTC),
        history=file_histories(commits),
        owners=merge_owners(commits),
        bulk=bulk_limit(len(entries), policy.freshness.bulk_min_files, policy.freshness.bulk_share),
        evidence=_source_evidence(repo, entries, source, policy, (blobs, included), sphinx_configs),
        plan=inc,
        sphinx=sphinx,
    )
    evidence = ctx.evidence
    ctx.failed_configs = {p for p, _s, _e in evidence.failures}
    report.extend(
        _row(source, commit, p, "failed", "", stage, err) for p, stage, err in evidence.failures if p not in inc.carry
    )
    checks = _attach_vouches(ctx, Path(data_dir), ledger, blobs)

    rows = empty_rows()
    if inc.carry:
        assert run.previous is not None  # a plan carries rows forward only from a previous build
        carried = carried_rows(run.previous, inc.carry, commit, source)
        report.extend(carried.pop("ingest_report"))
        for name, r in carried.items():
            rows[name].extend(r)
    _extract_all(ctx, blobs, rows, report, run.on_chunks)
    attach_partials(rows["documents"], evidence.routes)
    reanchor_partials(rows["documents"], rows["chunks"], evidence.routes)
    # every link (carried forward or new, the site's navigation too) resolved over the source as it now is
    nav = navigation_rows(source.name, navigation_files(repo, entries, source))
    rows["links"] = resolve_links(
        source.name, rows["links"] + nav, rows["documents"], [e.path for e in entries], evidence.routes
    )

    result = SourceResult(source.name, commit, note=inc.note, signature_checks=checks)
    for name, r in rows.items():
        result.tables[name] = table_from_rows(name, r)
    result.tables["ingest_report"] = table_from_rows("ingest_report", sorted(report, key=lambda r: r["path"]))
    result.counts = {name: t.num_rows for name, t in result.tables.items()}
    return result


def _source_evidence(
    repo: Mirror,
    entries: list[TreeEntry],
    source: Source,
    policy: Policy,
    read: tuple[dict[str, bytes], list[str]],
    sphinx_configs: dict[str, bytes],
) -> SourceEvidence:
    """What the whole tree says about each file: its configuration files read now (``read``: the bytes read and
    the paths ingested; ``sphinx_configs``: the ``conf.py`` files already read) and the docs site's configuration."""
    blobs, included = read
    docs_configs = docs_config_evidence(repo, entries, source, blobs | sphinx_configs) | sphinx_configs
    return SourceEvidence(
        policy,
        # a site's config the include reads itself (a conf.py under **/*.py) is evidence all the same
        {p: d for p, d in blobs.items() if kind_of(p) == "config" or is_site_config(p)} | docs_configs,
        sorted(set(included) | set(docs_configs)),
        [e.path for e in entries],
    )


def _attach_vouches(
    ctx: SourceContext, data_dir: Path, ledger: list[LedgerEntry], blobs: dict[str, bytes]
) -> CheckCount:
    """The ledger's vouches and the source's signatures (commits, tags, attestations) on ``ctx``; what git checked
    now and what came from the signature cache."""
    source, repo = ctx.source, ctx.repo
    ctx.vouches = ledger_links(repo, source, ledger, ctx.ids, blobs)
    signers_dir = data_dir / "signers" / source.name
    signed = signature_evidence(
        repo, signers_dir, cache_file(data_dir, source.name), source, ctx.ids, ctx.history, ctx.owners, blobs
    )
    log.info(
        "source %s: %d signatures checked by git, %d from the cache",
        source.name,
        signed.count.verified,
        signed.count.cached,
    )
    ctx.signatures, ctx.attestations = signed.checks, signed.attestations
    for path, links in signed.tag_links.items():
        ctx.vouches.setdefault(path, []).extend(links)
    return signed.count


def _read_tree(
    repo: Mirror,
    source: Source,
    commit: str,
    entries: list[TreeEntry],
    carry: set[str],
    carried_ingested: set[str],
    policy: Policy,
    report: list[Row],
) -> tuple[dict[str, bytes], list[str]]:
    """The bytes of every file to extract, and every path ingested (read now or carried forward); a skipped or
    unreadable entry gets its report row."""
    max_bytes = policy.ingest.max_file_bytes
    blobs: dict[str, bytes] = {}
    included: list[str] = []
    for e in entries:
        if e.path in carry and kind_of(e.path) != "config":
            if e.path in carried_ingested:
                included.append(e.path)
            continue
        rule = skip_rule_for_entry(e, source, max_bytes)
        if rule is None and e.missing:
            reason = f"blob {e.sha} is not in the mirror (an incomplete copy of the repository)"
            report.append(_row(source, commit, e.path, "failed", "", "read", reason))
            continue
        if rule is None:
            try:
                data = read_blob(repo, e.sha)
            except Exception as exc:  # a corrupt object fails that file alone
                report.append(_row(source, commit, e.path, "failed", "", "read", str(exc)))
                continue
            rule = skip_rule_for_bytes(data, e.path)
            if rule is None:
                blobs[e.path] = data
                included.append(e.path)
                continue
        report.append(_row(source, commit, e.path, "skipped", rule, "", ""))
    return blobs, included


def _extract_all(
    ctx: SourceContext,
    blobs: dict[str, bytes],
    rows: dict[str, list[Row]],
    report: list[Row],
    on_chunks: Callable[[list[Row]], None] | None = None,
) -> None:
    """Extract each file read now and add its rows (or its failure) to ``rows`` and ``report``."""
    source, commit = ctx.source, ctx.commit
    with progress.stage("extract", len(blobs), unit="files", source=source.name) as bar:
        for path, data in sorted(blobs.items()):
            bar.advance()
            if path in ctx.plan.carry:
                continue
            kind = RESTRUCTUREDTEXT if ctx.sphinx.is_page(path) else kind_of(path)
            try:
                extraction = None if kind == "config" else extractor_for(kind)(data, ctx.file_context(path))
            except ExtractionError as exc:
                report.append(_row(source, commit, path, "failed", "", "extract", str(exc)))
                continue
            except Exception as exc:  # an extractor bug must not fail the source
                report.append(_row(source, commit, path, "failed", "", "extract", f"{type(exc).__name__}: {exc}"))
                continue
            if path in ctx.failed_configs:
                continue
            try:
                local = document_rows(ctx, path, data, kind, extraction)
            except Exception as exc:  # evidence for one file must not fail the source
                report.append(_row(source, commit, path, "failed", "", "evidence", f"{type(exc).__name__}: {exc}"))
                continue
            for name, r in local.items():
                rows[name].extend(r)
            if on_chunks is not None:
                on_chunks(local["chunks"])
            warnings = local["documents"][0]["warnings"]
            report.append(_row(source, commit, path, "ingested", "", "", "; ".join(warnings)[:500]))


def _row(source: Source, commit: str, path: str, status: str, rule: str, stage: str, reason: str) -> Row:
    return {
        "source": source.name,
        "commit": commit,
        "path": path,
        "status": status,
        "rule": rule,
        "stage": stage,
        "reason": reason,
    }
