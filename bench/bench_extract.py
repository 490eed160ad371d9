"""Extraction throughput (MB/s, files/s) over the real Midnight docs, against reading + decoding the same bytes.

    PYTHONPATH=. .venv/bin/python bench/bench_extract.py [--files N]

Ours: every file through ``ingest.dispatch.extractor_for(kind_of(path))`` with the real
token counter (``encoder.tokens.token_counter()``, the model's WordPiece tokenizer) and
the default policy's chunk sizes, as a refresh runs it.  Reference: reading the same
files and decoding them as UTF-8, the floor any extractor pays.  Both passes run on a
warm page cache (one untimed read first), interleaved round by round; the reported
ratio is the median of the per-round ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.common import CORPUS, figure, print_figures, save, setup_env  # noqa: E402


def corpus_files(root: Path = CORPUS, limit: int | None = None) -> list[tuple[str, Path]]:
    """(repository path, file) for every regular file outside .git, in path order."""
    out = sorted(
        (p.relative_to(root).as_posix(), p)
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts
    )
    return out[:limit] if limit else out


def extract_all(files: list[tuple[str, Path]], count_tokens=None, keep_chunks: bool = False):
    """Run the real extractors over ``files``; returns (bytes, files, chunks, failures, chunk rows)."""
    from trustindex.encoder.tokens import token_counter
    from trustindex.extractors.base import ExtractionError, FileContext
    from trustindex.ingest.dispatch import extractor_for, kind_of
    from trustindex.schemas.policy import Policy

    count_tokens = count_tokens or token_counter()
    ing = Policy.default().ingest
    total = nfiles = nchunks = failures = 0
    rows = []
    for rel, p in files:
        kind = kind_of(rel)
        data = p.read_bytes()
        total += len(data)
        nfiles += 1
        if kind == "config":  # manifests feed version evidence, not passages (ingest.source does the same)
            continue
        ctx = FileContext(
            source="bench",
            path=rel,
            commit="0" * 40,
            count_tokens=count_tokens,
            max_tokens=ing.max_tokens,
            target_tokens=ing.target_tokens,
        )
        try:
            ex = extractor_for(kind)(data, ctx)
        except ExtractionError:
            failures += 1
            continue
        nchunks += len(ex.chunks)
        if keep_chunks:
            rows.extend((rel, c) for c in ex.chunks)
    return total, nfiles, nchunks, failures, rows


def read_decode(files: list[tuple[str, Path]]) -> int:
    total = 0
    for _rel, p in files:
        total += len(p.read_bytes().decode("utf-8", errors="replace"))
    return total


def run(limit: int | None = None, rounds: int = 2) -> dict:
    from trustindex.encoder.tokens import token_counter

    files = corpus_files(limit=limit)
    if not files:
        raise SystemExit(f"{CORPUS}: no files")
    counter = token_counter()
    read_decode(files)  # warm the page cache for both sides
    counter("warm up the tokenizer")
    ours_s, ref_s, ratios = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        read_decode(files)
        ref = time.perf_counter() - t0
        t0 = time.perf_counter()
        total, nfiles, nchunks, failures, _ = extract_all(files, counter)
        ours = time.perf_counter() - t0
        ours_s.append(ours)
        ref_s.append(ref)
        ratios.append(ref / ours)
    import numpy as np

    ours, ref = float(np.median(ours_s)), float(np.median(ref_s))
    mb = total / 1e6
    figures = [
        figure("extraction throughput", mb / ours, "MB/s", "read + decode", mb / ref, float(np.median(ratios))),
        figure("extraction files/s", nfiles / ours, "files/s", "read + decode", nfiles / ref, float(np.median(ratios))),
        figure("passages extracted", nchunks, "chunks"),
    ]
    return {
        "figures": figures,
        "files": nfiles,
        "bytes": total,
        "chunks": nchunks,
        "failures": failures,
        "rounds": rounds,
        "extract_s": ours_s,
        "reference_s": ref_s,
        "method": f"{nfiles} real files ({mb:.2f} MB) of {CORPUS.name} through the real extractors with the "
        f"model's WordPiece token counter; reference: reading and UTF-8 decoding the same bytes "
        f"(page cache warm); ratio = our throughput / the reference's (median of {rounds} "
        f"interleaved rounds).",
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=None, help="only the first N files (default: all)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args(argv)
    setup_env()
    r = run(a.files, a.rounds)
    print_figures("extraction", r["figures"])
    if not a.no_save:
        save("extraction", r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
