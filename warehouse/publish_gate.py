"""The publish safety gate: refuse a snapshot that lost too much of a source.

For every source whose configuration did not change (same config sha256 in
both snapshots), the new snapshot may not have lost more than the policy's
share of the live snapshot's chunks or documents of that source.  A source
that failed, or whose include/exclude changed, is the operator's doing and
is reported, not blocked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.policy import Policy
from trustindex.schemas.snapshot import SNAPSHOTS_DIR
from trustindex.warehouse.catalog import connect_snapshot, refresh_catalog
from trustindex.warehouse.snapshots import current_id, set_current


class PublishRefused(TrustIndexError):
    pass


def _counts(snapshot_dir: Path) -> dict[str, dict]:
    con = connect_snapshot(snapshot_dir)
    try:
        rows = con.execute("""
            SELECT s.source, s.config_sha256, s.status,
                   (SELECT count(*) FROM documents d WHERE d.source = s.source) AS documents,
                   (SELECT count(*) FROM chunks c WHERE c.source = s.source) AS chunks
            FROM sources s""").fetchall()
    finally:
        con.close()
    return {r[0]: {"config": r[1], "status": r[2], "documents": r[3], "chunks": r[4]} for r in rows}


def check_publish(live_dir: Path | None, new_dir: Path, policy: Policy) -> list[str]:
    """The reasons to refuse publishing ``new_dir`` over ``live_dir`` (empty: safe)."""
    if live_dir is None or not Path(live_dir).is_dir():
        return []
    old, new = _counts(Path(live_dir)), _counts(Path(new_dir))
    p = policy.publish
    problems = []
    for name, o in sorted(old.items()):
        n = new.get(name)
        if n is None or n["config"] != o["config"]:
            continue  # the operator removed or reconfigured the source
        for what, limit in (("chunks", p.max_chunk_loss), ("documents", p.max_document_loss)):
            if o[what] and (o[what] - n[what]) / o[what] > limit:
                problems.append(
                    f"source {name} would lose {o[what] - n[what]} of {o[what]} {what} "
                    f"(more than publish.max_{'chunk' if what == 'chunks' else 'document'}_loss = "
                    f"{limit:.0%})" + (f"; it {n['status']}" if n["status"] != "ok" else "")
                )
    return problems


def publish_snapshot(data: Path, sid: str, policy: Policy, force: bool, warn: Callable[[str], None]) -> list[str]:
    """Move CURRENT to ``sid`` past the safety gate (or refuse: PublishRefused), refresh the catalog; the gate's
    findings (published past with ``force``, each one ``warn``-ed)."""
    live = current_id(data)
    gate = []
    if live != sid:
        gate = check_publish(data / SNAPSHOTS_DIR / live if live else None, data / SNAPSHOTS_DIR / sid, policy)
        if gate and not force:
            raise PublishRefused(
                f"refusing to publish snapshot {sid} (CURRENT stays {live}): "
                + "; ".join(gate)
                + ". If this loss is intended, run again with --force."
            )
        for g in gate:
            warn(f"publishing despite the safety gate (--force): {g}")
        set_current(data, sid)
    refresh_catalog(data, data / SNAPSHOTS_DIR / sid)
    return gate
