"""The base install serves: a wheel of this checkout, installed with its base dependencies alone into a fresh
virtualenv, answers queries against a snapshot the full install built, exactly as the full install answers them,
with no torch, Prefect or sentence-transformers there to import.

The virtualenv takes its pins from requirements.lock and its packages from the package index (pip's cache makes a
second run fast); with no index reachable the tests skip and say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DISTRIBUTION = PYPROJECT["project"]["name"]
BUILD_ONLY = ("torch", "prefect", "sentence_transformers")
# (query, targets): one plain question, one with a version target (the version-matching path)
QUERIES = [
    ("How do I install the Compact compiler?", []),
    ("Wallet API deprecated replacement", ["docs=v1"]),
]
K = 5
# What pip prints when it cannot reach an index (urllib3 / socket errors), as opposed to a real resolution failure.
NO_NETWORK = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|"
    r"Name or service not known|Network is unreachable|No route to host|ConnectTimeoutError|ProxyError|"
    r"Max retries exceeded"
)


@dataclass(frozen=True)
class BaseInstall:
    venv: Path
    site_packages: Path
    workdir: Path  # not the checkout: from its root, the checkout's own trustindex/ folder would shadow the wheel
    env: dict[str, str]

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *args: str | Path) -> subprocess.CompletedProcess:
        return _run(args, self.workdir, self.env)

    def python_json(self, code: str, *args: str) -> object:
        r = self.run(self.python, "-c", code, *args)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout)


def _run(args, cwd: Path, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _wheel_sources(dest: Path) -> Path:
    """What the wheel is built from, copied out of the checkout: building in place would leave build/ and
    *.egg-info there, and a stale build/lib can carry deleted modules into the next wheel."""
    for folder in sorted(set(PYPROJECT["tool"]["setuptools"]["package-dir"].values())):
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", PYPROJECT["project"]["readme"]):
        shutil.copy2(ROOT / name, dest / name)
    return dest


def _constraints(dest: Path) -> Path:
    """requirements.lock as a constraints file: the same pins, without extras (pip: "Constraints cannot have
    extras"; the lock has `moto[server]`, which `make` installs as a requirement)."""
    pins = [re.sub(r"\[[^]]*\]", "", ln) for ln in (ROOT / "requirements.lock").read_text().splitlines()]
    dest.write_text("\n".join(pins) + "\n")
    return dest


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> BaseInstall:
    tmp = tmp_path_factory.mktemp("base-install")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    wheels = tmp / "wheels"
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels]
    built = _run([*pip_wheel, _wheel_sources(tmp / "src")], tmp, env)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    (wheel,) = wheels.glob(f"{DISTRIBUTION}-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)  # no system site packages
    python = venv / "bin" / "python"
    r = _run([python, "-m", "pip", "install", "-c", _constraints(tmp / "constraints.txt"), wheel], tmp, env)
    if r.returncode != 0:
        output = r.stdout + r.stderr
        if NO_NETWORK.search(output):
            pytest.skip(f"no package index reachable to install the base dependencies: {NO_NETWORK.search(output)[0]}")
        pytest.fail("pip install of the base wheel failed:\n" + output[-4000:])
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp, env)
    return BaseInstall(venv, Path(purelib.stdout.strip()), tmp, env)


def test_the_build_stack_is_not_there(base):
    found = base.python_json(
        "import importlib, json, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        out[name] = True\n"
        "    except ModuleNotFoundError:\n"
        "        out[name] = False\n"
        "import trustindex\n"
        "out['trustindex'] = trustindex.__file__\n"
        "print(json.dumps(out))",
        *BUILD_ONLY,
    )
    assert {name: found[name] for name in BUILD_ONLY} == dict.fromkeys(BUILD_ONLY, False)
    assert Path(found["trustindex"]).is_relative_to(base.site_packages)  # the wheel, never the checkout


def _full_answers(index) -> list[dict]:
    return [_summary(index.search(q, k=K, targets=t or None)) for q, t in QUERIES]


def _summary(r: dict) -> dict:
    return {"snapshot_id": r["snapshot_id"], "chunk_ids": [h["chunk_id"] for h in r["hits"]]}


def test_python_api_answers_as_the_full_install(base, refreshed, index):
    expected = _full_answers(index)
    assert all(a["chunk_ids"] for a in expected)
    answers = base.python_json(
        "import json, sys\n"
        "from trustindex.query import Index\n"
        "index = Index.open(data_dir=sys.argv[1])\n"
        "out = []\n"
        "for q, t in json.loads(sys.argv[2]):\n"
        "    r = index.search(q, k=int(sys.argv[3]), targets=t or None)\n"
        "    out.append({'snapshot_id': r['snapshot_id'], 'chunk_ids': [h['chunk_id'] for h in r['hits']]})\n"
        "print(json.dumps(out))",
        str(refreshed["data"]),
        json.dumps(QUERIES),
        str(K),
    )
    assert answers == expected


def test_console_script_answers_as_the_full_install(base, refreshed, index):
    expected = _full_answers(index)
    for (q, targets), want in zip(QUERIES, expected, strict=True):
        flags = [f for t in targets for f in ("--target", t)]
        r = base.run(base.venv / "bin" / "trustindex", "query", q, *flags, "--data", refreshed["data"], "--k", str(K))
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip(), "the table is printed"
        r = base.run(
            base.venv / "bin" / "trustindex", "query", q, *flags, "--data", refreshed["data"], "--k", str(K), "--json"
        )
        assert r.returncode == 0, r.stderr
        assert _summary(json.loads(r.stdout)) == want


def test_serving_commands_run_and_build_commands_name_the_install(base, refreshed, tmp_path):
    trustindex = base.venv / "bin" / "trustindex"
    data = str(refreshed["data"])
    verify = base.run(trustindex, "snapshots", "verify", "--data", data)
    assert verify.returncode == 0 and "files verified" in verify.stdout, verify.stderr
    assert base.run(trustindex, "policy", "--show").returncode == 0
    sources = tmp_path / "sources.toml"  # never read: the missing install is said first
    for args, extra in [
        (["refresh", "--sources", str(sources), "--data", str(tmp_path / "data")], "build"),
        (["stats", "--data", data], "build"),
        (["mcp", "--data", data], "serve"),
    ]:
        r = base.run(trustindex, *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f'pip install "trustindex[{extra}]"' in r.stderr, r.stderr


def test_one_distribution_with_one_import_root(base):
    shown = base.run(base.python, "-m", "pip", "show", DISTRIBUTION)
    assert shown.returncode == 0 and f"Name: {DISTRIBUTION}" in shown.stdout, shown.stderr
    listed = json.loads(base.run(base.python, "-m", "pip", "list", "--format=json").stdout)
    assert [d["name"] for d in listed if d["name"].lower() == DISTRIBUTION] == [DISTRIBUTION]
    (dist_info,) = base.site_packages.glob(f"{DISTRIBUTION}-*.dist-info")
    record = [row.split(",")[0] for row in (dist_info / "RECORD").read_text().splitlines() if row]
    script = f"../../../bin/{DISTRIBUTION}"
    outside = [p for p in record if Path(p).parts[0] not in (DISTRIBUTION, dist_info.name) and p != script]
    assert outside == [], f"files installed outside the {DISTRIBUTION} package: {outside[:10]}"
    assert {f"{DISTRIBUTION}/query/index.py", f"{DISTRIBUTION}/schemas/response.schema.json", script} <= set(record)
    assert f"{DISTRIBUTION}/serve/http_app.py" in record  # the servers' room installs with the base; [serve] runs it
    top_level = dist_info / "top_level.txt"
    if top_level.exists():
        assert top_level.read_text().split() == [DISTRIBUTION]
    stages = [key.split(".", 1)[1] for key in PYPROJECT["tool"]["setuptools"]["package-dir"] if "." in key]
    assert stages and not [s for s in stages if (base.site_packages / s).exists()]
