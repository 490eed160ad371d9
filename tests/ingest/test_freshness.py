"""Last modified vs last substantive change, from one git log pass over a real repository."""

from tests.kits.gitutil import RepoBuilder
from trustindex.crawl.git import ensure_mirror, resolve_ref
from trustindex.crawl.history import file_histories, read_log
from trustindex.extractors.freshness import bulk_limit, is_cosmetic_change
from trustindex.ingest.context import is_substantive

DOC = "---\ntitle: Guide\n---\n# Guide\n\nInstall the compiler.\n"


def test_cosmetic_changes():
    assert is_cosmetic_change(b"# A\n\ntext here\n", b"# A\n\ntext   here\n\n")
    assert is_cosmetic_change(b"---\ntitle: a\n---\nbody\n", b"---\ntitle: b\nsidebar: 2\n---\nbody\n")
    assert not is_cosmetic_change(b"# A\nold words\n", b"# A\nnew words\n")
    assert not is_cosmetic_change(None, b"x")


def test_bulk_limit():
    assert bulk_limit(20, 10, 0.3) == 10
    assert bulk_limit(2000, 10, 0.3) == 600


def test_substantive_date_ignores_bulk_whitespace_and_front_matter(tmp_path):
    b = RepoBuilder(tmp_path / "src")
    others = {f"docs/p{i}.md": f"# P{i}\n\nbody {i}\n" for i in range(12)}
    first = b.commit({"docs/guide.md": DOC, **others}, "add docs", days=0)
    real = b.commit({"docs/guide.md": DOC.replace("compiler.", "compiler with the installer.")}, "real edit", days=10)
    b.commit(
        {
            p: t + "\nCopyright 2026\n"
            for p, t in {**others, "docs/guide.md": DOC.replace("compiler.", "compiler with the installer.")}.items()
        },
        "bulk: copyright footer",
        days=30,
    )
    b.commit(
        {
            "docs/guide.md": DOC.replace("compiler.", "compiler with the installer.").replace(
                "# Guide\n", "#  Guide\n\n"
            )
            + "\nCopyright 2026\n"
        },
        "whitespace",
        days=5,
    )
    last = b.commit(
        {
            "docs/guide.md": DOC.replace("title: Guide", "title: Guide\nsidebar_position: 2")
            .replace("compiler.", "compiler with the installer.")
            .replace("# Guide\n", "#  Guide\n\n")
            + "\nCopyright 2026\n"
        },
        "front matter only",
        days=5,
    )
    mirror = ensure_mirror(str(b.path), tmp_path / "m.git")
    head = resolve_ref(mirror, "main")
    assert head == last
    commits = read_log(mirror, head)
    h = file_histories(commits)["docs/guide.md"]
    assert h.touches[0].sha == last and h.touches[-1].sha == first
    limit = bulk_limit(13, 10, 0.3)
    flags = [is_substantive(mirror, c, "docs/guide.md", limit, {}) for c in h.touches]
    # newest first: front matter, whitespace, bulk, real edit, add
    assert flags == [False, False, False, True, True]
    first_sub = next(c for c, f in zip(h.touches, flags, strict=True) if f)
    assert first_sub.sha == real
