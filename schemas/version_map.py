"""What a docs version says it covers: the vocabulary the extractors write and the query side's inference reads.

A page often states no version of its own although its site says which versions it covers: a docs version's
compatibility matrix (``relnotes/support-matrix.mdx``: one row per component and version), its release notes
(``relnotes/<component>/``, each release with the other components' versions it ships: "Compact toolchain 0.31.0
… Language version 0.23.0") and its label.  query/version_inference.py reads the stored rows of those origins into
a map from docs version (and release) to component versions, and gives each page of that docs version that states
nothing for a component the map's versions, as *inferred* evidence (origin :data:`INFERRED`): weaker than the
page's own, never overriding it, and in strict mode accepted only where nothing on the page contradicts it.
"""

from __future__ import annotations

import posixpath
import re

RELEASE_NOTES = "release_notes"  # a release-notes page's component and version (extractors/release_notes.py)
COMPAT_MATRIX = "compat_matrix"  # a compatibility table's row (extractors/compat_matrix.py)
STAMP = "stamp"  # a version stamp line ("Compact language version 0.23.0", "- **Language version:** 0.23.0")
INFERRED = "inferred"  # what the page inherits from its docs version's map (never stored: worked out at query time)
# What a release-notes page states about its release (the release's other components ride along with it).
RELEASE_ORIGINS = frozenset({RELEASE_NOTES, STAMP})
RELNOTES_DIRS = ("relnotes", "release-notes", "release_notes", "releases")
_COMPAT_PAGE = re.compile(r"(support|compat(ibility)?)[-_ ]?(matrix|table)|compatibility", re.IGNORECASE)


def relnotes_folder(path: str) -> tuple[bool, str | None]:
    """(is the page under a release-notes directory, the component folder below it or None)."""
    parts = path.split("/")
    for i, part in enumerate(parts[:-1]):
        if part.lower() in RELNOTES_DIRS:
            below = parts[i + 1 : -1]
            return True, below[0] if below else None
    return False, None


def relnotes_index_folder(path: str) -> str | None:
    """The release-notes folder a page introduces: ``relnotes/compact.mdx`` or ``relnotes/compact/index.mdx`` →
    ``compact`` (its title and heading name the component the folder's releases are of)."""
    parts = path.split("/")
    stem = posixpath.splitext(parts[-1])[0]
    if len(parts) >= 2 and parts[-2].lower() in RELNOTES_DIRS and stem.lower() not in ("index", "overview"):
        return stem
    if len(parts) >= 3 and parts[-3].lower() in RELNOTES_DIRS and stem.lower() in ("index", "readme"):
        return parts[-2]
    return None


def is_compatibility_page(path: str) -> bool:
    """A page whose tables say what a docs version covers: one named a support or compatibility matrix
    (``relnotes/support-matrix.mdx``); a guide's "versions this example pins" table describes only that example,
    and a release's own notes list the versions of that release."""
    return bool(_COMPAT_PAGE.search(posixpath.splitext(posixpath.basename(path))[0]))
