"""``trustindex compilers list|build|check FILE``: the compilers of compilers.toml, built and tried."""

from __future__ import annotations

import json
from pathlib import Path

from trustindex.schemas.errors import ConfigError


def _config(a):
    from trustindex.schemas.config import load_build_config

    cfg = load_build_config(a.sources, compilers=a.compilers)
    if not cfg.compilers:
        raise ConfigError(a.compilers or str(Path(a.sources).parent / "compilers.toml"), None, "no [[compiler]] listed")
    return cfg


def compilers_command(a) -> int:
    from trustindex.flows.compile_step import resolve_compiler, scratch_dir
    from trustindex.ingest.compile_runner import Limits, compile_text, network_isolated

    cfg = _config(a)
    data = Path(a.data)
    sources = {s.name: s for s in cfg.sources}
    out, rc = [], 0
    if a.action == "check" and not a.file:
        raise ConfigError("compilers check", None, "name the .compact FILE to compile")
    for spec in cfg.compilers:
        entry: dict = {"compiler": spec.label}
        if a.action == "list" and not spec.path:
            from trustindex.flows.compile_step import is_built

            built = is_built(spec, data)
            entry["built"] = built
            if not built:  # list never builds: it says what build would do
                out.append(entry)
                continue
        try:
            c = resolve_compiler(spec, sources, data, fetch=a.action == "build")
        except Exception as e:  # one compiler that cannot be built or run is reported; the others still are
            entry["error"] = str(e)
            out.append(entry)
            rc = 1
            continue
        entry["identity"] = c.identity.key
        if a.action == "check":
            path = Path(a.file)
            r = compile_text(
                list(c.argv), {path.name: path.read_bytes()}, path.name, Limits(seconds=a.timeout), scratch_dir(data)
            )
            entry.update(outcome=r.outcome, reason=r.reason, seconds=r.seconds)
            rc = rc or (0 if r.outcome == "passed" else 2)
        out.append(entry)
    if a.json:
        print(json.dumps({"network_isolated": network_isolated(), "compilers": out}, indent=2))
    else:
        for e in out:
            what = e.get("identity") or ("not built" if e.get("built") is False else "")
            line = f"{e['compiler']}: {e.get('error') or what}"
            if "outcome" in e:
                line += f": {e['outcome']} ({e['seconds']:.2f} s)" + (f" {e['reason']}" if e["reason"] else "")
            print(line)
        if not network_isolated():
            print("note: unshare --net is unavailable here: compile checks run with the host's network")
    return rc
