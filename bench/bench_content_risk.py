"""Content risk on both sides: the hostile corpus of the tests (every case caught, no look-alike flagged) and the
real docs (at most 0.5% of passages flagged, each listed by path, line and reason so a person can judge it).

    python bench/bench_content_risk.py [DOCS_DIR] [--no-save]

DOCS_DIR defaults to ../shared/corpus/midnight-docs.  Every file goes through the extractor its kind gets in a
build (approximate token counter), then every passage through extractors/content_risk.py.  No passage text is
printed or saved: a finding is named by its path, line, rule and reason.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import CORPUS, figure, print_figures, save  # noqa: E402
from tests.kits.hostile_content import HOSTILE  # noqa: E402
from trustindex.extractors.base import FileContext  # noqa: E402
from trustindex.extractors.content_risk import neutralise, passage_risks, scan_text  # noqa: E402
from trustindex.ingest.dispatch import extractor_for, kind_of  # noqa: E402
from trustindex.schemas.content_risk import KINDS, default_rules  # noqa: E402

MAX_SHARE = 0.005


def hostile() -> dict:
    caught: collections.Counter[str] = collections.Counter()
    cases: collections.Counter[str] = collections.Counter()
    false_flags: list[str] = []
    for name, text, kind in HOSTILE:
        kinds = {f.kind for f in scan_text(text)}
        if kind is None:
            cases["look-alike"] += 1
            if kinds:
                false_flags.append(f"{name}: {sorted(kinds)}")
        else:
            cases[kind] += 1
            caught[kind] += kind in kinds
    return {"cases": dict(cases), "caught": dict(caught), "false_flags": false_flags}


def real_docs(docs: Path) -> dict:
    passages, failed, trimmed = 0, 0, 0
    by_kind: collections.Counter[str] = collections.Counter()
    by_rule: collections.Counter[str] = collections.Counter()
    flagged_passages: set[tuple[str, int]] = set()
    listed: list[dict] = []
    for p in sorted(docs.rglob("*")):
        rel = p.relative_to(docs).as_posix()
        kind = kind_of(rel)
        if not p.is_file() or kind == "config" or "/.git/" in f"/{rel}":
            continue
        try:
            ex = extractor_for(kind)(p.read_bytes(), FileContext("docs", rel))
        except Exception:  # a file the build would report as failed holds no passage
            failed += 1
            continue
        passages += len(ex.chunks)
        trimmed += sum(neutralise(ch.text) != ch.text for ch in ex.chunks)
        seen_kinds: dict[int, set[str]] = collections.defaultdict(set)
        seen_rules: set[tuple[int, str]] = set()
        for r in passage_risks(ex.chunks):
            flagged_passages.add((rel, r.chunk_ordinal))
            seen_kinds[r.chunk_ordinal].add(r.kind)
            seen_rules.add((r.chunk_ordinal, r.rule))
            listed.append({"path": rel, "line": r.start_line, "kind": r.kind, "rule": r.rule, "reason": r.reason})
        for kinds in seen_kinds.values():
            by_kind.update(kinds)
        by_rule.update(rule for _, rule in seen_rules)
    return {
        "passages": passages,
        "files_failed": failed,
        "flagged": len(flagged_passages),
        "served_text_trimmed": trimmed,  # passages whose served text lost a comment or invisible characters
        "by_kind": {k: by_kind.get(k, 0) for k in KINDS},
        "by_rule": {r.id: by_rule.get(r.id, 0) for r in default_rules()},  # passages each rule flags
        "findings": listed,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("docs", nargs="?", default=str(CORPUS))
    ap.add_argument("--no-save", action="store_true", help="print only; leave results.json and the docs alone")
    a = ap.parse_args()
    t0 = time.perf_counter()
    h = hostile()
    print("hostile corpus (tests/kits/hostile_content.py):")
    for k in (*KINDS, "look-alike"):
        n = h["cases"].get(k, 0)
        if k == "look-alike":
            print(f"  look-alikes (warnings, legitimate steps): {n}, flagged {len(h['false_flags'])}")
        else:
            print(f"  {k}: {h['caught'].get(k, 0)}/{n} caught")
    for f in h["false_flags"]:
        print(f"    FALSE FLAG {f}")
    docs = Path(a.docs)
    if not docs.is_dir():
        print(f"real docs: {docs} not found; nothing measured there")
        return 1
    r = real_docs(docs)
    share = r["flagged"] / max(1, r["passages"])
    print(f"real docs ({docs.name}): {r['flagged']} of {r['passages']} passages flagged ({share:.3%})")
    print(f"  served text trimmed (HTML comments outside code, invisible characters): {r['served_text_trimmed']}")
    for k, n in r["by_kind"].items():
        print(f"  {k}: {n} passages")
    print("  by rule (passages flagged, share of all passages):")
    for rule, n in r["by_rule"].items():
        print(f"    {rule}: {n} ({n / max(1, r['passages']):.3%})")
    for f in r["findings"]:
        print(f"  {f['path']}:{f['line']} [{f['kind']}/{f['rule']}] {f['reason']}")
    hostile_total = sum(v for k, v in h["cases"].items() if k != "look-alike")
    hostile_caught = sum(h["caught"].values())
    figures = [
        figure(
            "hostile cases caught",
            hostile_caught / hostile_total,
            "share",
            goal="= 1",
            met=hostile_caught == hostile_total,
        ),
        figure("look-alikes flagged", len(h["false_flags"]), "cases", goal="= 0", met=not h["false_flags"]),
        figure("real passages flagged", share, "share", goal=f"<= {MAX_SHARE}", met=share <= MAX_SHARE),
    ]
    print_figures("content risk", figures)
    if not a.no_save:
        method = (
            f"bench/bench_content_risk.py: the tests' hostile corpus ({hostile_total} hostile cases, "
            f"{h['cases'].get('look-alike', 0)} look-alikes) and every file of {docs.name} through its build "
            f"extractor ({r['passages']} passages), each passage through extractors/content_risk.py; "
            f"{time.perf_counter() - t0:.1f} s."
        )
        save("content_risk", {"figures": figures, "method": method, "hostile": h, "real_docs": r})
    return 0 if all(f["met"] for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
