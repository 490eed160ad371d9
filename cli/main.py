"""The ``trustindex`` command.  Build commands import Prefect and the model
lazily, so ``query`` and ``snapshots`` start fast."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path

from trustindex.schemas.errors import TrustIndexError

DEFAULT_BACKEND = "onnx-int8"  # warehouse.embeddings.DEFAULT_BACKEND, without importing the build side


def _prefect_env(data_dir: Path) -> None:
    os.environ.setdefault("PREFECT_HOME", str((data_dir / ".prefect").resolve()))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _dask_address(a) -> str | None:
    if a.task_runner == "dask" and not a.dask_address:
        raise TrustIndexError("--task-runner dask needs --dask-address tcp://HOST:PORT (a running Dask scheduler)")
    return a.dask_address if a.task_runner == "dask" else None


def _show_progress(a) -> bool:
    """Progress bars only for a person at a terminal: never with --quiet, --json or a pipe."""
    return sys.stderr.isatty() and not getattr(a, "quiet", False) and not getattr(a, "json", False)


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def cmd_refresh(a) -> int:
    from trustindex.cli.build import load_build_config, run_refresh

    data = Path(a.data)
    cfg = load_build_config(a.sources, a.identities, a.policy, a.ledger)
    data.mkdir(parents=True, exist_ok=True)
    _prefect_env(data)
    from trustindex.ingest import progress
    from trustindex.warehouse.lock import data_dir_lock

    with data_dir_lock(data, wait_seconds=a.wait, what="refresh"), progress.enabled(_show_progress(a)):
        result = run_refresh(cfg, data, backend=a.backend, force=a.force, dask_address=_dask_address(a))
    if a.json:
        _print_json(result)
    elif not a.quiet:
        from trustindex.cli.build import describe_refresh

        print(describe_refresh(result))
    return 0 if not result["failures"] else 3


def cmd_backfill(a) -> int:
    data = Path(a.data)
    commits = {}
    for item in a.commit or []:
        name, sep, sha = item.partition("=")
        if not sep or not name or not sha:
            raise TrustIndexError(f"--commit {item!r}: expected SOURCE=SHA")
        commits[name] = sha
    if not a.as_of and not commits:
        raise TrustIndexError("backfill: give --as-of DATE or --commit SOURCE=SHA")
    from trustindex.schemas.config import load_build_config

    load_build_config(a.sources)  # validate before starting Prefect
    data.mkdir(parents=True, exist_ok=True)
    _prefect_env(data)
    from trustindex.cli.build import in_process_settings
    from trustindex.flows.backfill import backfill_flow
    from trustindex.ingest import progress
    from trustindex.warehouse.lock import data_dir_lock

    with (
        data_dir_lock(data, wait_seconds=a.wait, what="backfill"),
        progress.enabled(_show_progress(a)),
        in_process_settings(),
    ):
        result = backfill_flow(
            a.sources,
            str(data),
            as_of=a.as_of,
            commits=commits or None,
            publish=a.publish,
            backend=a.backend,
            force=a.force,
        )
    if a.json:
        _print_json(result)
    else:
        from trustindex.cli.build import describe_refresh

        print(describe_refresh(result))
        for name, sha in result["commits"].items():
            print(f"  {name} as of {result['as_of'] or 'pinned'}: {sha[:12]}")
    return 0 if not result["failures"] else 3


def cmd_query(a) -> int:
    from trustindex.query.index import Index
    from trustindex.query.render import render_table

    index = (
        Index.open(a.snapshot, data_dir=a.data, policy=a.policy)
        if a.snapshot
        else Index.open(data_dir=a.data, policy=a.policy)
    )
    if a.batch:
        return _batch(index.warm(), a)  # many queries: the int8 prefilter pays for itself
    if a.text is None:
        raise TrustIndexError("query: give the query TEXT or --batch FILE")
    r = index.search(a.text, k=a.k, targets=a.target or None, strict=a.strict, also=a.also or None)
    if a.json:
        _print_json(r)
    else:
        print(render_table(r, explain=a.explain))
    return 0


def _batch(index, a) -> int:
    """One response or error object a line, in order; the exit status is the number of failed lines (at most 125)."""
    from trustindex.query.batch import BatchDefaults, batch_lines

    path = Path(a.batch)
    if not path.is_file():
        raise TrustIndexError(f"{path}: batch file not found")
    failed = 0
    defaults = BatchDefaults(k=a.k, targets=a.target or None, strict=a.strict)
    for r, bad in batch_lines(index, path.read_text(encoding="utf-8"), defaults):
        failed += bad
        sys.stdout.write(json.dumps(r, separators=(",", ":"), default=str) + "\n")
    if failed:
        print(f"{path}: {failed} request(s) failed (error objects in their place)", file=sys.stderr)
    return min(failed, 125)


def cmd_policy(a) -> int:
    from trustindex.schemas.policy import Policy

    p = Policy.load(a.policy)
    print(p.to_toml(), end="")
    return 0


def cmd_snapshots(a) -> int:
    from trustindex.cli import snapshots_cmd

    return snapshots_cmd.run(a)


def cmd_report(a) -> int:
    if a.html:
        from trustindex.warehouse.report_html import render_report

        out = render_report(Path(a.data), Path(a.html))
        print(f"wrote {out}")
        return 0
    from trustindex.cli.inspect_cmd import report

    return report(a)


def cmd_inspect(a) -> int:
    from trustindex.cli.inspect_cmd import inspect

    return inspect(a)


def cmd_stats(a) -> int:
    from trustindex.cli.inspect_cmd import stats

    return stats(a)


def cmd_calibrate(a) -> int:
    from trustindex.query.calibrate import calibrate, read_queries
    from trustindex.query.index import Index
    from trustindex.schemas.policy import Policy

    base = Policy.load(a.policy)
    ins, outs = read_queries(a.in_domain), read_queries(a.out_of_domain)
    index = (
        Index.open(a.snapshot, data_dir=a.data, policy=base) if a.snapshot else Index.open(data_dir=a.data, policy=base)
    )
    policy, result = calibrate(index, ins, outs, base)
    out = Path(a.out or a.policy or "policy.toml")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(
        "# Calibrated by `trustindex calibrate` for "
        + index.data.manifest.embedding_model.get("id", "")
        + f" on snapshot {index.snapshot_id}\n"
        + policy.to_toml()
    )
    os.replace(tmp, out)
    result.update(policy_file=str(out), policy_id=policy.policy_id, snapshot_id=index.snapshot_id)
    if a.json:
        _print_json(result)
    else:
        print(
            f"separation (AUROC) {result['auroc']:.3f} on {result['in_domain']['n']} in-domain and "
            f"{result['out_of_domain']['n']} out-of-domain queries"
        )
        print(
            f"best cosine: in-domain min {result['in_domain']['min']:.3f} median "
            f"{result['in_domain']['median']:.3f}; out-of-domain median {result['out_of_domain']['median']:.3f} "
            f"max {result['out_of_domain']['max']:.3f}"
        )
        print(
            f"high_threshold = {result['high_threshold']} (recall {result['high_recall']:.0%}), mid_threshold = "
            f"{result['mid_threshold']} (out-of-domain above it: {result['ood_above_mid']:.0%})"
        )
        print(
            f"answer_confidence = sigmoid({result['calibration_slope']} × cosine + {result['calibration_intercept']})"
        )
        print(f"wrote {out} ({policy.policy_id}, calibration {result['calibration_id']})")
    return 0


def cmd_mcp(a) -> int:
    from trustindex.query.mcp_server import serve

    serve(Path(a.data), policy=a.policy)
    return 0


def cmd_export(a) -> int:
    from trustindex.warehouse.export import export_snapshot

    result = export_snapshot(Path(a.data), a.snapshot_id, a.to, endpoint=a.endpoint)
    if a.json:
        _print_json(result)
    else:
        print(f"exported snapshot {result['snapshot_id']} to {result['target']} ({result['files']} files verified)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="trustindex", description="A trust-aware documentation index.")
    p.add_argument("--verbose", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("refresh", help="crawl, extract, index, publish")
    r.add_argument("--sources", required=True)
    r.add_argument("--identities", help="default: identities.toml beside the sources file")
    r.add_argument("--policy")
    r.add_argument("--ledger", help="verifications.toml (default: beside the sources file, if present)")
    r.add_argument("--data", default="data")
    r.add_argument(
        "--backend",
        default=os.environ.get("TRUSTINDEX_EMBEDDER", DEFAULT_BACKEND),
        choices=["sentence-transformers", "onnx-int8"],
    )
    r.add_argument("--force", action="store_true", help="publish even past the safety gate (and say so)")
    r.add_argument(
        "--task-runner",
        choices=["threads", "dask"],
        default="threads",
        help="where the per-source tasks run (dask: an existing cluster, see --dask-address)",
    )
    r.add_argument("--dask-address", metavar="ADDR", help="the Dask scheduler, e.g. tcp://127.0.0.1:8786")
    r.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long for another writer of the data directory",
    )
    r.add_argument("--json", action="store_true")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(fn=cmd_refresh)

    b = sub.add_parser("backfill", help="build the index as the sources stood at a date or commits")
    b.add_argument("--sources", required=True)
    b.add_argument("--as-of", metavar="DATE")
    b.add_argument("--commit", action="append", metavar="SOURCE=SHA")
    b.add_argument("--publish", action="store_true", help="also move CURRENT to the backfilled snapshot")
    b.add_argument("--force", action="store_true", help="with --publish: publish even past the safety gate")
    b.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")
    b.add_argument("--data", default="data")
    b.add_argument(
        "--backend",
        default=os.environ.get("TRUSTINDEX_EMBEDDER", DEFAULT_BACKEND),
        choices=["sentence-transformers", "onnx-int8"],
    )
    b.add_argument("--json", action="store_true")
    b.add_argument("--quiet", action="store_true")
    b.set_defaults(fn=cmd_backfill)

    q = sub.add_parser("query", help="ask the live snapshot")
    q.add_argument("text", nargs="?")
    q.add_argument("--batch")
    q.add_argument("--data", default="data")
    q.add_argument("--snapshot")
    q.add_argument("--k", type=int, default=5)
    q.add_argument("--target", action="append", metavar="COMPONENT=VERSION_OR_RANGE")
    q.add_argument("--also", action="append", metavar="TEXT", help="another phrasing of the same question")
    q.add_argument("--strict", action="store_true")
    q.add_argument("--policy")
    q.add_argument("--json", action="store_true")
    q.add_argument("--explain", action="store_true")
    q.set_defaults(fn=cmd_query)

    po = sub.add_parser("policy", help="show the policy in force")
    po.add_argument("--show", action="store_true", required=True)
    po.add_argument("--policy")
    po.set_defaults(fn=cmd_policy)

    s = sub.add_parser("snapshots", help="list|show|verify|rollback|gc")
    s.add_argument("action", choices=["list", "show", "verify", "rollback", "gc"])
    s.add_argument("snapshot_id", nargs="?")
    s.add_argument("--data", default="data")
    s.add_argument("--policy")
    s.add_argument("--wait", type=float, default=0.0, metavar="SECONDS", help="rollback/gc: wait for a writer")
    s.add_argument("--json", action="store_true")
    s.set_defaults(fn=cmd_snapshots)

    rp = sub.add_parser("report", help="what the live snapshot's run ingested, skipped, failed")
    rp.add_argument("--data", default="data")
    rp.add_argument("--json", action="store_true")
    rp.add_argument("--html", metavar="OUT.html", help="write a self-contained HTML report with plots")
    rp.set_defaults(fn=cmd_report)

    i = sub.add_parser("inspect", help="the evidence behind one document")
    i.add_argument("--source", required=True)
    i.add_argument("--path", required=True)
    i.add_argument("--data", default="data")
    i.add_argument("--json", action="store_true")
    i.set_defaults(fn=cmd_inspect)

    st = sub.add_parser("stats", help="per-source evidence counts")
    st.add_argument("--data", default="data")
    st.add_argument("--json", action="store_true")
    st.set_defaults(fn=cmd_stats)
    c = sub.add_parser("calibrate", help="fit the match-tier thresholds from labelled query lists")
    c.add_argument("--in-domain", required=True, metavar="FILE")
    c.add_argument("--out-of-domain", required=True, metavar="FILE")
    c.add_argument("--policy", help="the policy to start from (default: built-in)")
    c.add_argument("--out", help="where to write the calibrated policy (default: --policy, else ./policy.toml)")
    c.add_argument("--data", default="data")
    c.add_argument("--snapshot")
    c.add_argument("--json", action="store_true")
    c.set_defaults(fn=cmd_calibrate)

    m = sub.add_parser("mcp", help="an MCP server (stdio) over the live snapshot")
    m.add_argument("--data", default="data")
    m.add_argument("--policy", help="policy.toml (reloaded when it changes)")
    m.set_defaults(fn=cmd_mcp)

    e = sub.add_parser("export", help="copy a snapshot to a serving tier (path or s3://bucket/prefix)")
    e.add_argument("snapshot_id")
    e.add_argument("--to", required=True, metavar="URI")
    e.add_argument(
        "--endpoint",
        default=os.environ.get("AWS_ENDPOINT_URL"),
        help="S3-compatible endpoint, e.g. http://127.0.0.1:9000",
    )
    e.add_argument("--data", default="data")
    e.add_argument("--json", action="store_true")
    e.set_defaults(fn=cmd_export)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except TrustIndexError as e:
        if args.verbose:
            traceback.print_exc()
        print(f"trustindex {args.command}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: still one line, with the way to see more
        if args.verbose:
            traceback.print_exc()
        else:
            print(
                f"trustindex {args.command}: internal error: {type(e).__name__}: {e} (run with --verbose for "
                f"the traceback)",
                file=sys.stderr,
            )
        return 70


if __name__ == "__main__":
    sys.exit(main())
