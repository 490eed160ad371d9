"""Build one source's tables at one commit: crawl, extract, attach evidence.

This is the normalize stage: bytes read from git objects go through the pure
extractors; attribution, freshness and verification evidence is attached from
the operator's configuration and the source's history.  Every tree entry ends
in ``ingest_report`` as ingested, skipped (with its rule) or failed (with the
stage and error).  One bad file never fails the source.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa

from trustindex.crawl.git import commit_time, ensure_mirror, list_tree, mirror_path, read_blob, resolve_ref
from trustindex.crawl.history import file_histories, read_log
from trustindex.crawl.signatures import (
    SignatureError,
    allowed_signers_file,
    commit_signatures,
    signature_links,
    tag_signatures,
)
from trustindex.extractors.attribution import attribute
from trustindex.extractors.base import ExtractionError, FileContext
from trustindex.extractors.freshness import bulk_limit, is_cosmetic_change
from trustindex.extractors.globs import matches
from trustindex.extractors.verification import chain_for_file, make_link, merge_owners
from trustindex.ingest import progress
from trustindex.ingest.dispatch import extractor_for, kind_of
from trustindex.ingest.evidence import SourceEvidence, docs_config_evidence
from trustindex.ingest.files import skip_rule_for_bytes, skip_rule_for_entry
from trustindex.ingest.incremental import Previous, carried_rows, plan
from trustindex.schemas.config import Identities, LedgerEntry, Source
from trustindex.schemas.policy import Policy
from trustindex.schemas.tables import chunk_id_of, doc_id_of, sha256_text, table_from_rows

log = logging.getLogger(__name__)
MAX_TOUCHES = 50  # older touches are treated as substantive: conservative, bounded work


def embed_text(heading_path: list[str], symbol_path: str | None, path: str, text: str) -> str:
    """What the model sees: the passage with its place in the document."""
    if symbol_path:
        return f"{path} :: {symbol_path}\n{text}"
    if heading_path:
        return " > ".join(heading_path) + "\n" + text
    return text


@dataclass
class SourceResult:
    source: str
    commit: str
    tables: dict[str, pa.Table] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    note: str = ""


def _url_for(repo_url: str, commit: str, path: str) -> str:
    if repo_url.startswith(("https://", "http://")):
        return f"{repo_url.removesuffix('.git')}/blob/{commit}/{path}"
    return ""


def _utc(dt: datetime) -> datetime:
    return dt.astimezone(UTC)


def ingest_source(
    source: Source,
    data_dir: Path,
    ids: Identities,
    ledger: list[LedgerEntry],
    policy: Policy,
    count_tokens: Callable[[str], int],
    commit: str | None = None,
    previous: Previous | None = None,
) -> SourceResult:
    repo = ensure_mirror(source.url, mirror_path(data_dir, source.name))
    commit = commit or resolve_ref(repo, source.ref, source.url)
    entries = list_tree(repo, commit)
    commits = read_log(repo, commit)
    hist = file_histories(commits)
    owners = merge_owners(commits)
    fr = policy["freshness"]
    bulk = bulk_limit(len(entries), fr["bulk_min_files"], fr["bulk_share"])
    ing = policy["ingest"]
    ctx_base = dict(
        source=source.name,
        commit=commit,
        count_tokens=count_tokens,
        max_tokens=ing["max_tokens"],
        target_tokens=ing["target_tokens"],
    )
    head_time = datetime.fromtimestamp(commit_time(repo, commit), UTC)
    inc = plan(repo, previous, commit, commits)

    report: list[dict] = []
    blobs: dict[str, bytes] = {}
    included: list[str] = []
    for e in entries:
        if e.path in inc.carry and kind_of(e.path) != "config":
            if e.path in inc.ingested:
                included.append(e.path)
            continue
        rule = skip_rule_for_entry(e, source, ing["max_file_bytes"])
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

    docs_configs = docs_config_evidence(repo, entries, source, blobs)
    evidence = SourceEvidence(
        policy,
        {p: d for p, d in blobs.items() if kind_of(p) == "config"} | docs_configs,
        sorted(set(included) | set(docs_configs)),
    )
    report.extend(
        _row(source, commit, p, "failed", "", stage, err) for p, stage, err in evidence.failures if p not in inc.carry
    )
    failed_configs = {p for p, _s, _e in evidence.failures}
    ledger_links = _ledger_links(repo, source, commit, ledger, ids, blobs)
    sig_checks = _signature_evidence(repo, data_dir, source, ids, hist, blobs, ledger_links)

    rows: dict[str, list[dict]] = {
        k: [] for k in ("documents", "chunks", "attribution", "verifications", "version_targets", "deprecations")
    }
    if inc.carry:
        carried = carried_rows(previous, inc.carry, commit, source.url)
        report.extend(carried.pop("ingest_report"))
        for name, r in carried.items():
            rows[name].extend(r)
    substantive_cache: dict[tuple[str, str], bool] = {}
    with progress.stage(f"extract {source.name}", len(blobs)) as bar:
        _extract_all(
            source,
            commit,
            repo,
            blobs,
            inc,
            ctx_base,
            failed_configs,
            hist,
            bulk,
            substantive_cache,
            owners,
            ids,
            ledger_links,
            evidence,
            head_time,
            count_tokens,
            rows,
            report,
            bar,
            sig_checks,
        )

    result = SourceResult(source.name, commit, note=inc.note)
    for name, r in rows.items():
        result.tables[name] = table_from_rows(name, r)
    result.tables["ingest_report"] = table_from_rows("ingest_report", sorted(report, key=lambda r: r["path"]))
    result.counts = {name: t.num_rows for name, t in result.tables.items()}
    return result


def _extract_all(
    source,
    commit,
    repo,
    blobs,
    inc,
    ctx_base,
    failed_configs,
    hist,
    bulk,
    substantive_cache,
    owners,
    ids,
    ledger_links,
    evidence,
    head_time,
    count_tokens,
    rows,
    report,
    bar,
    sig_checks=None,
) -> None:
    for path, data in sorted(blobs.items()):
        bar.advance()
        if path in inc.carry:
            continue
        kind = kind_of(path)
        try:
            extraction = None if kind == "config" else extractor_for(kind)(data, FileContext(path=path, **ctx_base))
        except ExtractionError as exc:
            report.append(_row(source, commit, path, "failed", "", "extract", str(exc)))
            continue
        except Exception as exc:  # an extractor bug must not fail the source
            report.append(_row(source, commit, path, "failed", "", "extract", f"{type(exc).__name__}: {exc}"))
            continue
        if path in failed_configs:
            continue
        try:
            local = _document_rows(
                source,
                commit,
                path,
                data,
                kind,
                extraction,
                hist.get(path),
                repo,
                bulk,
                substantive_cache,
                owners,
                ids,
                ledger_links.get(path, []),
                evidence,
                head_time,
                count_tokens,
                sig_checks or {},
            )
        except Exception as exc:  # evidence for one file must not fail the source
            report.append(_row(source, commit, path, "failed", "", "evidence", f"{type(exc).__name__}: {exc}"))
            continue
        for name, r in local.items():
            rows[name].extend(r)
        warnings = local["documents"][0]["warnings"]
        report.append(_row(source, commit, path, "ingested", "", "", "; ".join(warnings)[:500]))


def _document_rows(
    source,
    commit,
    path,
    data,
    kind,
    extraction,
    h,
    repo,
    bulk,
    substantive_cache,
    owners,
    ids,
    ledger_links,
    evidence,
    head_time,
    count_tokens,
    sig_checks,
) -> dict[str, list[dict]]:
    """Every table's rows for one document."""
    rows: dict[str, list[dict]] = {
        k: [] for k in ("documents", "chunks", "attribution", "verifications", "version_targets", "deprecations")
    }
    doc_id = doc_id_of(source.name, path)
    touches = h.touches[:MAX_TOUCHES] if h else []
    subst = {c.sha: _is_substantive(repo, c, path, bulk, substantive_cache) for c in touches}
    last = touches[0] if touches else None
    last_sub = next((c for c in touches if subst[c.sha]), touches[-1] if touches else None)
    text = data.decode("utf-8", "replace")
    targets = evidence.version_targets(path, kind, text, extraction)
    deprecations = evidence.deprecations(path, kind, text, extraction)
    fm = extraction.front_matter if extraction else {}
    rows["documents"].append(
        {
            "doc_id": doc_id,
            "source": source.name,
            "repo": source.url,
            "commit": commit,
            "path": path,
            "kind": kind,
            "content_sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "last_modified": _utc(last.commit_date) if last else head_time,
            "last_modified_commit": last.sha if last else commit,
            "last_substantive_change": _utc(last_sub.commit_date) if last_sub else head_time,
            "last_substantive_commit": last_sub.sha if last_sub else commit,
            "front_matter": json.dumps(fm, sort_keys=True, default=str),
            "url": _url_for(source.url, commit, path),
            "warnings": list(extraction.warnings) if extraction else [],
        }
    )
    rows["attribution"].append(
        {
            "doc_id": doc_id,
            **attribute(source, path, ids, last.author_name if last else "", last.author_email if last else ""),
        }
    )
    links = chain_for_file(touches, subst, owners, ids) + signature_links(touches, subst, sig_checks, ids)
    for link in ledger_links:  # vouched at a commit: stale only if a substantive change came after it
        if link.stale:
            link.stale = any(subst.get(t.sha) and t.commit_date > link.date for t in touches)
    for link in links + ledger_links:
        rows["verifications"].append(
            {
                "doc_id": doc_id,
                "verifier": link.verifier,
                "verifier_email": link.verifier_email,
                "publisher": link.publisher,
                "tier": link.tier,
                "method": link.method,
                "commit": link.commit,
                "date": _utc(link.date),
                "stale": link.stale,
                "detail": link.detail,
            }
        )
    chunk_ids: dict[int, str] = {}
    for ch in extraction.chunks if extraction else []:
        etext = embed_text(ch.heading_path, ch.symbol_path, path, ch.text)
        cid = chunk_id_of(source.name, path, ch.start_line, ch.end_line, sha256_text(ch.text), ch.ordinal)
        chunk_ids[ch.ordinal] = cid
        rows["chunks"].append(
            {
                "chunk_id": cid,
                "doc_id": doc_id,
                "source": source.name,
                "path": path,
                "ordinal": ch.ordinal,
                "heading_path": list(ch.heading_path),
                "symbol_path": ch.symbol_path,
                "start_line": ch.start_line,
                "end_line": ch.end_line,
                "text": ch.text,
                "content_sha256": sha256_text(etext),
                "token_count": ch.token_count or count_tokens(etext),
            }
        )
    for vt in targets:
        rows["version_targets"].append(
            {
                "doc_id": doc_id,
                "chunk_id": chunk_ids.get(vt.chunk_ordinal) if vt.chunk_ordinal is not None else None,
                "component": vt.component,
                "constraint": vt.constraint,
                "intervals": vt.intervals,
                "origin": vt.origin,
                "status": vt.status,
                "detail": vt.detail,
            }
        )
    for d in deprecations:
        rows["deprecations"].append(
            {
                "doc_id": doc_id,
                "chunk_id": chunk_ids.get(d.chunk_ordinal) if d.chunk_ordinal is not None else None,
                "scope": d.scope,
                "reason": d.reason,
                "marker": d.marker,
            }
        )
    return rows


def _row(source: Source, commit: str, path: str, status: str, rule: str, stage: str, reason: str) -> dict:
    return {
        "source": source.name,
        "commit": commit,
        "path": path,
        "status": status,
        "rule": rule,
        "stage": stage,
        "reason": reason,
    }


def _is_substantive(repo, c, path: str, bulk: int, cache: dict) -> bool:
    key = (c.sha, path)
    if key not in cache:
        old, new = c.changes.get(path, (None, None))
        if old is None:
            cache[key] = True  # the file's creation is substantive, even inside an initial import
        elif len(c.changes) > bulk:
            cache[key] = False
        else:
            try:
                cache[key] = not is_cosmetic_change(
                    read_blob(repo, old) if old else None, read_blob(repo, new) if new else None
                )
            except Exception:
                cache[key] = True
    return cache[key]


def _signature_evidence(
    repo, data_dir: Path, source: Source, ids: Identities, hist, blobs: dict[str, bytes], ledger_links: dict[str, list]
) -> dict:
    """Signatures git verifies against the operator's signers: commits (returned) and tags (added to the
    per-file links like a ledger entry).  Skipped entirely when no person lists a signing key."""
    allowed = allowed_signers_file(ids, Path(data_dir) / "signers" / source.name)
    if allowed is None:
        return {}
    shas = sorted({c.sha for p in blobs if p in hist for c in hist[p].touches[:MAX_TOUCHES]})
    try:
        checks = commit_signatures(repo, shas, allowed) if shas else {}
        tags = [t for t in tag_signatures(repo, allowed) if t.status == "good"]
    except SignatureError as e:
        log.warning("source %s: signatures not checked: %s", source.name, e)
        return {}
    for t in tags:
        try:
            tree = {e.path: e.sha for e in list_tree(repo, t.commit)}
        except Exception:
            continue
        for path, data in blobs.items():
            then = read_blob(repo, tree[path]) if path in tree else None
            stale = then is None or not (then == data or is_cosmetic_change(then, data))
            ledger_links.setdefault(path, []).append(
                make_link(ids, t.principal, t.principal, "signature", t.commit, t.date, stale, f"signed tag {t.tag}")
            )
    return checks


def _ledger_links(
    repo, source: Source, commit: str, ledger: list[LedgerEntry], ids: Identities, blobs: dict[str, bytes]
) -> dict[str, list]:
    """The operator's ledger: a verifier vouched for matching paths as of a commit or tag."""
    out: dict[str, list] = {}
    for entry in ledger:
        if entry.source != source.name:
            continue
        try:
            sha = repo.git.rev_parse("--verify", "--quiet", f"{entry.commit}^{{commit}}").strip()
            when = datetime.fromtimestamp(int(repo.git.show("-s", "--format=%ct", sha)), UTC)
            tree = {e.path: e.sha for e in list_tree(repo, sha)}
        except Exception:
            continue  # a ledger commit this source does not have vouches for nothing
        for path, data in blobs.items():
            if not matches(path, entry.path):
                continue
            then = read_blob(repo, tree[path]) if path in tree else None
            stale = then is None or not (then == data or is_cosmetic_change(then, data))
            out.setdefault(path, []).append(
                make_link(
                    ids,
                    entry.verifier,
                    entry.verifier,
                    "ledger",
                    sha,
                    when,
                    stale,
                    f"operator ledger ({entry.method}){': ' + entry.note if entry.note else ''}",
                )
            )
    return out
