"""The ``trustindex`` command.  Build commands import Prefect and the model
lazily, so ``query`` and ``snapshots`` start fast and run in the base install;
a command that needs an extra says which one (``cli/extras.py``)."""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

from trustindex.cli.extras import require
from trustindex.cli.parser import build_parser
from trustindex.schemas.errors import TrustIndexError


def prefect_env(prefect_home: Path) -> None:
    """The environment a build runs Prefect and the model under, where the caller has not set it:
    Prefect's state in ``prefect_home``, a patient ephemeral server, no analytics, quiet logs, and
    no network for the model (the tests use it too)."""
    os.environ.setdefault("PREFECT_HOME", str(prefect_home.resolve()))
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _dask_address(a) -> str | None:
    if a.task_runner == "dask" and not a.dask_address:
        raise TrustIndexError("--task-runner dask needs --dask-address tcp://HOST:PORT (a running Dask scheduler)")
    if getattr(a, "dask_sources", False) and a.task_runner != "dask":
        raise TrustIndexError("--dask-sources needs --task-runner dask --dask-address tcp://HOST:PORT")
    return a.dask_address if a.task_runner == "dask" else None


def _show_progress(a) -> str | None:
    """Progress bars for a person at a terminal, plain lines at a bounded rate in a log (cron, CI), none with
    --quiet; --json keeps bars off (lines on standard error leave the JSON on standard output intact)."""
    from trustindex.runtime.progress import BARS, LINES

    if getattr(a, "quiet", False):
        return None
    if sys.stderr.isatty():
        return None if getattr(a, "json", False) else BARS
    return LINES


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def cmd_refresh(a) -> int:
    started = time.monotonic()  # the command's time includes Prefect's start, which the flow's does not
    require("build")
    from trustindex.cli.build import load_build_config, run_refresh

    data = Path(a.data)
    cfg = load_build_config(a.sources, a.identities, a.policy, a.ledger, compilers=getattr(a, "compilers", None))
    data.mkdir(parents=True, exist_ok=True)
    prefect_env(data / ".prefect")
    from trustindex.runtime import progress
    from trustindex.warehouse.lock import data_dir_lock

    with data_dir_lock(data, wait_seconds=a.wait, what="refresh"), progress.enabled(_show_progress(a)):
        result = run_refresh(
            cfg,
            data,
            backend=a.backend,
            force=a.force,
            dask_address=_dask_address(a),
            max_sources=a.max_sources,
            dask_sources=a.dask_sources,
        )
    result["command_seconds"] = round(time.monotonic() - started, 3)
    if a.json:
        _print_json(result)
    elif not a.quiet:
        from trustindex.cli.build import describe_refresh

        print(describe_refresh(result))
    return 0 if not result["failures"] else 3


def cmd_backfill(a) -> int:
    started = time.monotonic()
    require("build")
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
    prefect_env(data / ".prefect")
    from trustindex.cli.build import in_process_settings
    from trustindex.flows.backfill import backfill_flow
    from trustindex.runtime import progress
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
        ).to_json()
    result["command_seconds"] = round(time.monotonic() - started, 3)
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
    require("build")
    if a.html:
        from trustindex.report.html import render_report
        from trustindex.schemas.policy import Policy

        out = render_report(Path(a.data), Path(a.html), Policy.load(a.policy))
        print(f"wrote {out}")
        return 0
    from trustindex.cli.inspect_cmd import report

    return report(a)


def cmd_inspect(a) -> int:
    require("build")
    from trustindex.cli.inspect_cmd import inspect

    return inspect(a)


def cmd_stats(a) -> int:
    require("build")
    from trustindex.cli.inspect_cmd import stats

    return stats(a)


def cmd_compilers(a) -> int:
    require("build")
    from trustindex.cli.compilers_cmd import compilers_command

    return compilers_command(a)


def cmd_calibrate(a) -> int:
    require("build")
    from trustindex.calibration.fit import calibrate
    from trustindex.calibration.judged import read_jsonl
    from trustindex.calibration.text import calibration_lines
    from trustindex.query.index import Index
    from trustindex.schemas.answer_signals import DEFAULT_FEATURES, SIGNALS
    from trustindex.schemas.policy import Policy

    base = Policy.load(a.policy)
    queries = [q for f in a.judged for q in read_jsonl(Path(f))]
    index = (
        Index.open(a.snapshot, data_dir=a.data, policy=base) if a.snapshot else Index.open(data_dir=a.data, policy=base)
    )
    features = tuple(f.strip() for f in a.features.split(",") if f.strip()) if a.features else DEFAULT_FEATURES
    unknown = [f for f in features if f not in SIGNALS]
    if unknown or not features:
        raise TrustIndexError(
            f"--features: {unknown[0] if unknown else '(none)'} is not a signal ({', '.join(SIGNALS)})"
        )
    policy, result = calibrate(
        index, queries, base, split=a.split, isotonic=a.isotonic, min_grade=a.min_grade, features=features
    )
    out = Path(a.out or a.policy or "policy.toml")
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(
        "# Calibrated by `trustindex calibrate` for "
        + index.data.manifest.embedding_model.get("id", "")
        + f" on snapshot {index.snapshot_id}\n"
        + policy.to_toml()
    )
    os.replace(tmp, out)
    result.update(policy_file=str(out), policy_id=policy.policy_id)
    if a.html:
        from trustindex.report.calibration import render_calibration_report

        result["html"] = str(render_calibration_report(result, Path(a.html)))
    if a.json:
        _print_json(result)
    else:
        print("\n".join(calibration_lines(result)))
        print(f"wrote {out} ({policy.policy_id})" + (f" and {result['html']}" if a.html else ""))
    return 0


def _source_spec(a, cache: str):
    """``serve``'s and ``mcp``'s snapshot source: a data directory or an export target, and how it is trusted."""
    from trustindex.schemas.signing import parse_duration
    from trustindex.serve.live import SourceSpec

    max_age = parse_duration(a.max_snapshot_age, "--max-snapshot-age") if a.max_snapshot_age else 0.0
    extra = {} if getattr(a, "query_cache", None) is None else {"query_cache": a.query_cache}  # default: QUERY_CACHE
    spec = SourceSpec(
        data=None if a.source else str(a.data),
        uri=a.source,
        cache=str(Path(cache).expanduser().resolve()),
        endpoint=a.endpoint,
        grace_seconds=getattr(a, "grace", 600.0),
        policy=a.policy,
        trusted_keys=tuple(str(Path(k).resolve()) for k in a.trusted_key),
        keep_retired=getattr(a, "keep_retired", 2),
        cache_max_bytes=getattr(a, "cache_max_bytes", 0),
        max_snapshot_age=max_age,
        **extra,
    )
    spec.check()
    return spec


def cmd_mcp(a) -> int:
    require("serve")
    from trustindex.serve.mcp_server import serve

    serve(_source_spec(a, a.cache), poll_seconds=a.poll)
    return 0


def cmd_serve(a) -> int:
    require("serve")
    from trustindex.cli.serve_options import access_options
    from trustindex.serve.http_app import ServeConfig, ServeLimits, load_tokens
    from trustindex.serve.workers import ServeSetup, serve

    if a.workers < 1:
        raise TrustIndexError(f"--workers must be at least 1, got {a.workers}")
    limits = ServeLimits(
        max_body_bytes=a.max_body,
        max_k=a.max_k,
        max_batch=a.max_batch,
        max_batch_hits=a.max_batch_hits,
        max_concurrency=a.max_concurrency,
    )
    tokens = load_tokens(a.token_file, os.environ.get("TRUSTINDEX_TOKENS"))
    config = ServeConfig(
        host=a.host,
        port=a.port,
        limits=limits,
        tokens=tokens,
        poll_seconds=a.poll,
        allowed_hosts=tuple(a.allow_host),
        body_timeout=a.body_timeout,
        **access_options(a),
    )
    config.check()
    serve(ServeSetup(config=config, source=_source_spec(a, a.cache), workers=a.workers))
    return 0


def cmd_export(a) -> int:
    from trustindex.schemas.signing import parse_duration
    from trustindex.warehouse.export import export_snapshot

    valid_for = parse_duration(a.valid_for, "--valid-for") if a.valid_for else None
    result = export_snapshot(
        Path(a.data), a.snapshot_id, a.to, endpoint=a.endpoint, sign_key=a.sign_key, valid_for=valid_for
    )
    if a.json:
        _print_json(result)
    else:
        signed = f", signed by key {result['signed_by']}" if result["signed_by"] else ""
        if result["signed_by"]:
            signed += f" as sequence {result['sequence']}, expires {result['expires_at'] or 'never'}"
        sid, target, n = result["snapshot_id"], result["target"], result["files"]
        print(f"exported snapshot {sid} to {target} ({n} files verified{signed})")
    return 0


def cmd_keys(a) -> int:
    from trustindex.schemas.signing import generate_keys, load_trusted_keys

    key, pub = generate_keys(a.out)
    kid = load_trusted_keys([pub])[0].key_id
    print(f"wrote {key} (private, mode 0600: keep it secret) and {pub} (key id {kid})")
    return 0


COMMANDS = {
    "refresh": cmd_refresh,
    "backfill": cmd_backfill,
    "query": cmd_query,
    "policy": cmd_policy,
    "snapshots": cmd_snapshots,
    "report": cmd_report,
    "inspect": cmd_inspect,
    "stats": cmd_stats,
    "calibrate": cmd_calibrate,
    "compilers": cmd_compilers,
    "mcp": cmd_mcp,
    "serve": cmd_serve,
    "export": cmd_export,
    "keys": cmd_keys,
}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
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
