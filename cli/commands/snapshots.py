"""``trustindex snapshots list|show|verify|rollback|gc`` (cli/snapshots_cmd.py does the work)."""

from __future__ import annotations

ABOUT = "list|show|verify|rollback|gc"
EXAMPLES = ("trustindex snapshots list --data data", "trustindex snapshots rollback 0123456789abcdef --data data")
OPTIONS = ("data", "policy", "json", "wait")


def arguments(s) -> None:
    s.add_argument("action", choices=["list", "show", "verify", "rollback", "gc"], help="what to do")
    s.add_argument("snapshot_id", nargs="?", help="the snapshot (default: the live one; rollback: the previous one)")


def run(a) -> int:
    from trustindex.cli import snapshots_cmd

    return snapshots_cmd.run(a)
