"""Compile checks with the real compiler (compactc 0.31.1 built from ../shared/toolchains once per session).

The sandboxed check agrees with running compactc directly; hostile inputs stop at their limit and write nothing
outside the scratch directory; a refresh compiles each text once, a no-change refresh compiles nothing, and the
evidence reaches the version factor."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.kits.compilerkit import NANOPASS, ROUGH_DRAFT, TAG, needs_compiler
from tests.kits.gitutil import RepoBuilder
from tests.kits.realdata import REAL_DOCS
from trustindex.extractors.compact_program import checkable_fences
from trustindex.ingest.compile_runner import Limits, compile_text
from trustindex.schemas.compilers import LIMIT, PASSED, REJECTED, TIMEOUT, CompilerSpec
from trustindex.schemas.config import Source

pytestmark = needs_compiler

COUNTER = """pragma language_version >= 0.16;
import CompactStandardLibrary;
export ledger round: Counter;
export circuit increment(): [] { round.increment(1); }
"""
TYPE_ERROR = COUNTER.replace("increment(1)", "increment(true)")
TOO_NEW = COUNTER.replace(">= 0.16", "0.26")
LOOP = COUNTER.replace("round.increment(1);", "for (const i of 0..200000) { round.increment(1); }")


def _direct(program: Path, text: str, tmp: Path) -> tuple[bool, str]:
    """compactc run as a person would: exit 0 means it compiled; the first stderr line otherwise."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "c.compact").write_text(text, encoding="utf-8")
    r = subprocess.run(
        [str(program), "--skip-zk", "--vscode", "c.compact", "out"], cwd=tmp, capture_output=True, text=True, timeout=60
    )
    first = next((line.strip() for line in r.stderr.splitlines() if line.strip()), "")
    return r.returncode == 0, first


def _sample() -> list[str]:
    """Five texts: real whole-program docs fences when the real docs are there, else written here."""
    texts = [COUNTER, TYPE_ERROR, TOO_NEW]
    if REAL_DOCS.is_dir():
        for p in sorted((REAL_DOCS / "docs").rglob("*.md*")):
            texts += [c for _a, _b, c, w in checkable_fences(p.read_text("utf-8", "replace")) if not w]
            if len(texts) >= 12:
                break
    seen: list[str] = []
    for t in texts:
        if t not in seen:
            seen.append(t)
    return (seen[:2] + seen[3:6]) if len(seen) >= 6 else seen


def test_identity_and_build_cache(compactc):
    from trustindex.flows.compile_step import resolve_compiler

    data, program = compactc
    stamp = program.stat().st_mtime_ns
    source = Source(name="compact", url="unused", ref="main", publisher="x")
    spec = CompilerSpec(source="compact", tag=TAG, nanopass=str(NANOPASS), rough_draft=str(ROUGH_DRAFT))
    c = resolve_compiler(spec, {"compact": source}, data, fetch=False)
    assert c.identity.key == "compactc 0.31.1 (language 0.23.0)"
    assert program.stat().st_mtime_ns == stamp  # cached by tag and Chez version: not built again


def test_a_sample_of_five_agrees_with_compactc_run_directly(compactc, tmp_path):
    _data, program = compactc
    sample = _sample()
    assert len(sample) == 5
    outcomes = set()
    for i, text in enumerate(sample):
        r = compile_text([str(program)], {"c.compact": text.encode()}, "c.compact", Limits(), tmp_path / "scratch")
        ok, first = _direct(program, text, tmp_path / f"direct{i}")
        assert (r.outcome == PASSED) == ok, (i, r, first)
        assert r.outcome in (PASSED, REJECTED)
        if not ok:
            assert r.reason == first
        else:
            assert (r.compiler_version, r.language_version) == ("0.31.1", "0.23.0")
        outcomes.add(r.outcome)
    assert outcomes == {PASSED, REJECTED}


def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_hostile_inputs_stop_at_their_limit_and_write_nothing_outside(compactc, tmp_path, monkeypatch):
    _data, program = compactc
    watched = tmp_path / "watched"
    watched.mkdir()
    scratch = watched / "scratch"
    # a working directory of its own: the repository root is shared with the other test workers, which write
    # there meanwhile (hypothesis's database), so watching it would see their files
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "kept.txt").write_text("present before\n")
    monkeypatch.chdir(cwd)
    before_cwd = _tree(Path.cwd())
    long = compile_text([str(program)], {"c.compact": LOOP.encode()}, "c.compact", Limits(seconds=3), scratch)
    assert long.outcome == TIMEOUT and "wall-clock limit (3 s)" in long.reason and long.seconds < 10
    # an error message of ~400 kB (it quotes the unbound name) against a 64 kB file-size limit
    loud = f"export circuit go(): [] {{ {'x' * 400_000}(); }}\n".encode()
    big = compile_text([str(program)], {"c.compact": loud}, "c.compact", Limits(file_bytes=64 << 10), scratch)
    assert big.outcome == LIMIT and "file size limit" in big.reason
    assert _tree(watched) == {"scratch"} and not any(scratch.iterdir())  # every scratch dir removed
    assert _tree(Path.cwd()) == before_cwd == {"kept.txt"}


@pytest.fixture(scope="module")
def compiled_refresh(compactc, prefect_harness, tmp_path_factory):
    """A repository with a docs page (a whole program, one too new, a fragment) and a .compact file with an
    import, refreshed twice with the built compiler."""
    from trustindex.cli.build import load_build_config, run_refresh
    from trustindex.schemas.refresh_run import RefreshRequest

    _data, program = compactc
    root = tmp_path_factory.mktemp("compiled")
    b = RepoBuilder(root / "repo")
    page = f"# Counter\n\n```compact\n{COUNTER}```\n\n## Newer\n\n```compact\n{TOO_NEW}```\n\n## Fragment\n\n"
    page += "```compact\nexport ledger total: Counter;\n```\n"
    util = "module Util {\n  export pure circuit one(): Uint<16> { return 1; }\n}\n"
    main = COUNTER.replace("import CompactStandardLibrary;", 'import CompactStandardLibrary;\nimport "lib/Util";')
    main = main.replace("increment(1)", "increment(one())")
    b.commit({"docs/counter.md": page, "src/main.compact": main, "src/lib/Util.compact": util}, "init")
    (root / "sources.toml").write_text(
        '[[source]]\nname = "c"\nurl = "repo"\nref = "main"\npublisher = "mf"\ninclude = ["**/*.md", "**/*.compact"]\n',
        encoding="utf-8",
    )
    (root / "identities.toml").write_text('[[publisher]]\nid = "mf"\nname = "MF"\ntier = "foundation"\n')
    (root / "compilers.toml").write_text(f"[[compiler]]\npath = {json.dumps(str(program))}\n")
    data = root / "data"
    cfg = load_build_config(str(root / "sources.toml"))
    first = run_refresh(cfg, RefreshRequest(str(data)))
    second = run_refresh(cfg, RefreshRequest(str(data)))
    return {"data": data, "first": first, "second": second}


def test_a_refresh_compiles_each_text_once_and_a_no_change_refresh_nothing(compiled_refresh):
    first, second = compiled_refresh["first"], compiled_refresh["second"]
    assert first["compile"]["compilers"] == ["compactc 0.31.1 (language 0.23.0)"]
    # two .compact files, two whole-program fences, one wrapped fragment: five texts, one compiler
    assert first["compile"]["compiled"] == 5 and first["compile"]["cached"] == 0
    assert second["compile"]["compiled"] == 0 and second["compile"]["cached"] == 5
    assert second["reused_snapshot"]
    from trustindex.schemas.snapshot import resolve_current

    rows = pq.read_table(resolve_current(compiled_refresh["data"]) / "compile_checks.parquet").to_pylist()
    by = {(r["path"], r["kind"], r["outcome"]) for r in rows}
    assert ("src/main.compact", "file", PASSED) in by  # its import was written beside it from the blobs
    assert ("docs/counter.md", "fence", REJECTED) in by and ("docs/counter.md", "wrapped_fence", PASSED) in by
    rejected = next(r for r in rows if r["outcome"] == REJECTED)
    assert "language version 0.23.0 mismatch" in rejected["reason"]


def test_compile_evidence_reaches_the_version_factor(compiled_refresh):
    from trustindex.query.index import Index

    index = Index.open(data_dir=compiled_refresh["data"])
    r = index.search("counter increment round", k=10, targets={"compact-language": "0.23"}, strict=True)
    vm = [h["factors"]["version_match"]["evidence"]["targets"][0] for h in r["hits"]]
    assert vm and all(t["status"] == "satisfies" for t in vm)
    assert any(t["origin"] == "compiled" and "compiles with compactc 0.31.1" in t["detail"] for t in vm)
    texts = [h["text"] for h in r["hits"]]
    assert not any("language_version 0.26" in t for t in texts)  # the one 0.31.1 rejects is breaking: dropped


def test_the_report_shows_the_compile_matrix(compiled_refresh, tmp_path):
    """The HTML report: per source and compiler, distinct texts checked and each outcome, as a plot and a table."""
    from trustindex.report.html import collect, render_html
    from trustindex.schemas.snapshot import resolve_current

    rows = pq.read_table(resolve_current(compiled_refresh["data"]) / "compile_checks.parquet").to_pylist()
    d = collect(compiled_refresh["data"])
    page = render_html(d)
    assert 'id="plot-compile"' in page and "Compile checks per source and compiler" in page
    cells = {(r["source"], r["outcome"]): r["n"] for r in d["compile_checks"]}
    for (source, outcome), n in cells.items():  # what the table counts is what the table of checks holds
        assert n == len({r["text_sha256"] for r in rows if r["source"] == source and r["outcome"] == outcome})
    assert cells[("c", PASSED)] >= 2 and cells[("c", REJECTED)] >= 1
    assert "<td>compactc 0.31.1</td>" in page


@pytest.mark.skipif(not os.environ.get("TRUSTINDEX_TEST_COMPACTC"), reason="no second compactc named")
def test_a_new_compiler_compiles_each_text_once_for_it_only(compactc, compiled_refresh, tmp_path):
    """TRUSTINDEX_TEST_COMPACTC=path[:path]: further built compilers (another tag) to add to the refresh's."""
    from trustindex.flows.compile_step import Compiler, compile_sources
    from trustindex.ingest.compile_runner import identify
    from trustindex.warehouse.compile_cache import CompileCache

    _data, program = compactc
    data = compiled_refresh["data"]
    paths = [str(program), *os.environ["TRUSTINDEX_TEST_COMPACTC"].split(":")]
    comps = [Compiler(p, (p,), identify([p], tmp_path)) for p in paths]
    from trustindex.schemas.snapshot import resolve_current
    from trustindex.warehouse.tables import last_source_meta, load_source_tables

    key, meta = last_source_meta(data, "c")
    tables = load_source_tables(data, "c", key)
    rows = [{"source": "c", "commit": meta["commit"]}]
    _out, report = compile_sources({"c": tables}, rows, data, comps, CompileCache(data))
    assert report.compiled == 5 * (len(comps) - 1) and report.cached == 5
    _out, again = compile_sources({"c": tables}, rows, data, comps, CompileCache(data))
    assert again.compiled == 0
    assert resolve_current(data).is_dir()
