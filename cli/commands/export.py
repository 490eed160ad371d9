"""``trustindex export``: a snapshot copied (and optionally signed) to a serving tier."""

from __future__ import annotations

from pathlib import Path

ABOUT = "copy a snapshot to a serving tier (path or s3://bucket/prefix)"
EXAMPLES = (
    "trustindex export 0123456789abcdef --to /srv/trustindex/data --data data",
    "trustindex export 0123456789abcdef --to s3://bucket/prefix --endpoint http://127.0.0.1:9000",
    "trustindex export current --to /srv/trustindex/data --sign-key keys/signing.key --valid-for 7d",
)
OPTIONS = ("data", "json", "endpoint")


def arguments(e) -> None:
    e.add_argument("snapshot_id", help="the snapshot to copy")
    e.add_argument("--to", required=True, metavar="URI", help="a directory or s3://bucket/prefix")
    e.add_argument("--sign-key", metavar="FILE", help="sign the manifest with this Ed25519 key (`keys generate`)")
    e.add_argument(
        "--valid-for",
        metavar="DURATION",
        help="signed expiry (12h, 7d): past it replicas stop being ready until the target is exported again",
    )


def run(a) -> int:
    from trustindex.cli.common import print_json
    from trustindex.schemas.signing import parse_duration
    from trustindex.warehouse.export import export_snapshot

    valid_for = parse_duration(a.valid_for, "--valid-for") if a.valid_for else None
    result = export_snapshot(
        Path(a.data), a.snapshot_id, a.to, endpoint=a.endpoint, sign_key=a.sign_key, valid_for=valid_for
    )
    if a.json:
        print_json(result)
    else:
        signed = f", signed by key {result['signed_by']}" if result["signed_by"] else ""
        if result["signed_by"]:
            signed += f" as sequence {result['sequence']}, expires {result['expires_at'] or 'never'}"
        sid, target, n = result["snapshot_id"], result["target"], result["files"]
        print(f"exported snapshot {sid} to {target} ({n} files verified{signed})")
    return 0
