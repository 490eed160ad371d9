"""Run ``compactc`` on untrusted text, contained: one sandboxed process per check.

The text comes from crawled repositories, so each run gets a fresh scratch directory (removed afterwards), an
empty environment, a wall-clock timeout (the process group is killed), and rlimits set before the compiler
starts (util-linux ``prlimit``, else ``setrlimit`` in the child before exec): address space, CPU seconds, the
size of any file it writes (its stdout and stderr are files in the scratch directory, so an endless print stops
at the same limit), open files, no core dumps.  Where ``unshare --net`` works the process also runs without a
network (``network_isolated()`` says whether it does).  Nothing the compiler writes is kept but the two versions
of ``compiler/contract-info.json`` and the first error line.  A hang, a crash or a limit is an outcome with its
reason (schemas.compilers.OUTCOMES), never an exception.
"""

from __future__ import annotations

import functools
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from trustindex.schemas.compilers import CRASHED, LIMIT, PASSED, REJECTED, TIMEOUT, CompilerIdentity


@dataclass(frozen=True)
class Limits:
    seconds: float = 30.0  # wall clock
    memory_bytes: int = 2 << 30  # address space: Chez maps ~100 MB for one contract
    file_bytes: int = 8 << 20  # any file it writes, its stdout and stderr included
    open_files: int = 256


@dataclass(frozen=True)
class RunResult:
    outcome: str
    reason: str  # the first error line, or why the sandbox stopped it ("" when passed)
    seconds: float
    compiler_version: str = ""  # from contract-info.json, when passed
    language_version: str = ""


@functools.cache
def network_isolated() -> bool:
    """Whether ``unshare --net`` can start a process here (it needs user namespaces or CAP_SYS_ADMIN)."""
    exe = shutil.which("unshare")
    if not exe:
        return False
    try:
        return subprocess.run([exe, "--net", "true"], capture_output=True, timeout=10, env={}).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _rlimits(limits: Limits) -> list[tuple[int, int, str]]:
    cpu = int(limits.seconds) + 2
    return [
        (resource.RLIMIT_AS, limits.memory_bytes, "--as"),
        (resource.RLIMIT_CPU, cpu, "--cpu"),
        (resource.RLIMIT_FSIZE, limits.file_bytes, "--fsize"),
        (resource.RLIMIT_NOFILE, limits.open_files, "--nofile"),
        (resource.RLIMIT_CORE, 0, "--core"),
    ]


def _limited(argv: list[str], limits: Limits):
    """``argv`` under the limits: through util-linux ``prlimit`` where it exists (a refresh runs in Prefect's
    thread pool, where a ``preexec_fn`` is unsafe), else set in a ``preexec_fn``."""
    exe = shutil.which("prlimit")
    if exe:
        return [exe, *(f"{flag}={n}" for _r, n, flag in _rlimits(limits)), "--", *argv], None

    def apply() -> None:
        for res, n, _flag in _rlimits(limits):
            resource.setrlimit(res, (n, n))

    return argv, apply


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:500]
    return ""


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _outcome(code: int, err: str, limits: Limits, info: dict | None) -> tuple[str, str]:
    if code == 0 and info is not None:
        return PASSED, ""
    if code < 0:
        sig = -code
        if sig == signal.SIGXFSZ:
            return LIMIT, f"file size limit ({limits.file_bytes} bytes) reached"
        if sig == signal.SIGXCPU:
            return LIMIT, f"CPU limit ({int(limits.seconds) + 2} s) reached"
        return CRASHED, f"killed by signal {signal.Signals(sig).name}"
    line = _first_line(err)
    if "out of memory" in err.lower() or "cannot allocate" in err.lower():
        return LIMIT, f"memory limit ({limits.memory_bytes} bytes): {line}"
    if code != 0 and line:
        return REJECTED, line
    return CRASHED, f"exit {code} " + ("without contract-info.json" if code == 0 else "without a message")


def run_sandboxed(argv: list[str], files: dict[str, bytes], args: list[str], limits: Limits, scratch_parent: Path):
    """Write ``files`` (relative paths, under ``src/``) into a fresh scratch dir, run ``argv + args`` there, remove
    it.  Returns (exit code, -signal, or None on timeout; the first 64 kB of stderr, or of stdout when stderr is
    empty; the parsed ``out/compiler/contract-info.json`` or None; seconds)."""
    scratch_parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="compile-", dir=scratch_parent))
    try:
        for rel, data in files.items():
            dest = scratch / "src" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        cmd, preexec = _limited((["unshare", "--net", "--"] if network_isolated() else []) + argv + args, limits)
        started = time.monotonic()
        with open(scratch / "stdout", "wb") as out, open(scratch / "stderr", "wb") as err:
            # its own process group (process_group=0): a timeout kills everything it started
            proc = subprocess.Popen(
                cmd,
                cwd=scratch,
                env={},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                process_group=0,
                preexec_fn=preexec,
            )
            try:
                code: int | None = proc.wait(timeout=limits.seconds)
            except subprocess.TimeoutExpired:
                _kill(proc)
                code = None
        seconds = time.monotonic() - started
        with open(scratch / "stderr", "rb") as f:
            stderr = f.read(64 << 10).decode("utf-8", "replace")
        info = None
        info_file = scratch / "out" / "compiler" / "contract-info.json"
        if info_file.is_file() and info_file.stat().st_size < (1 << 20):
            try:
                info = json.loads(info_file.read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError):
                info = None
        if code is not None:
            stdout = (scratch / "stdout").read_bytes()[: 64 << 10].decode("utf-8", "replace")
            if not stderr.strip():
                stderr = stdout  # some builds print their messages on stdout
        return code, stderr, info, seconds
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def compile_text(
    argv: list[str], files: dict[str, bytes], main: str, limits: Limits, scratch_parent: Path
) -> RunResult:
    """Compile ``main`` (a key of ``files``) with ``--skip-zk --vscode``: the outcome, never an exception."""
    try:
        code, err, info, seconds = run_sandboxed(
            argv, files, ["--skip-zk", "--vscode", f"src/{main}", "out"], limits, scratch_parent
        )
    except OSError as e:
        return RunResult(CRASHED, f"could not start the compiler: {e}", 0.0)
    if code is None:
        return RunResult(TIMEOUT, f"wall-clock limit ({limits.seconds:g} s) reached", round(seconds, 3))
    outcome, reason = _outcome(code, err, limits, info)
    versions = info or {}
    return RunResult(
        outcome,
        reason,
        round(seconds, 3),
        str(versions.get("compiler-version", "")),
        str(versions.get("language-version", "")),
    )


class CompilerUnusable(RuntimeError):
    pass


def identify(argv: list[str], scratch_parent: Path, limits: Limits | None = None) -> CompilerIdentity:
    """The version pair the compiler reports (``--version``, ``--language-version``), run in the same sandbox."""
    limits = limits or Limits(seconds=30.0)
    got = []
    for flag in ("--version", "--language-version"):
        code, err, _info, _s = run_sandboxed(argv, {}, [flag], limits, scratch_parent)
        text = _first_line(err) if code == 0 else ""
        if code != 0 or not text or " " in text:
            raise CompilerUnusable(f"{' '.join(argv)} {flag}: " + (_first_line(err) or f"exit {code}"))
        got.append(text)
    return CompilerIdentity(got[0], got[1])
