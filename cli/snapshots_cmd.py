"""``trustindex snapshots list|show|verify|rollback|gc``."""

from __future__ import annotations

import json
from pathlib import Path

from trustindex.schemas.errors import TrustIndexError
from trustindex.schemas.snapshot import SNAPSHOTS_DIR, read_manifest, verify_snapshot
from trustindex.warehouse.snapshots import current_id, gc, list_snapshots, manifest_dict, rollback, snapshot_summary


def run(a) -> int:
    data = Path(a.data)
    live = current_id(data)
    if a.action == "list":
        rows = [snapshot_summary(m, live) for m in list_snapshots(data)]
        if a.json:
            print(json.dumps(rows, indent=2))
        else:
            for r in rows:
                print(
                    f"{'*' if r['live'] else ' '} {r['snapshot_id']}  {r['created_at']}  "
                    f"{r['row_counts'].get('chunks', 0)} chunks  parent {r['parent'] or '-'}"
                )
        return 0
    sid = a.snapshot_id or live
    if sid is None and a.action in ("show", "verify"):
        raise TrustIndexError(f"{data}: no live snapshot; name one")
    if a.action == "show":
        print(json.dumps(manifest_dict(read_manifest(data / SNAPSHOTS_DIR / sid)), indent=2))
        return 0
    if a.action == "verify":
        m = verify_snapshot(data / SNAPSHOTS_DIR / sid)
        print(f"snapshot {m.snapshot_id}: {len(m.files)} files verified")
        return 0
    from trustindex.warehouse.lock import data_dir_lock

    if a.action == "rollback":
        with data_dir_lock(data, wait_seconds=a.wait, what="snapshots rollback"):
            target = rollback(data, a.snapshot_id)
        print(f"CURRENT -> {target}")
        return 0
    from trustindex.schemas.policy import Policy

    with data_dir_lock(data, wait_seconds=a.wait, what="snapshots gc"):
        removed = gc(data, Policy.load(a.policy).publish.retention)
    print(f"removed {len(removed)}: {', '.join(removed) or 'nothing'}")
    return 0
