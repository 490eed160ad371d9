"""Version match: a chunk's stored constraints against the query's targets.

Per target: satisfies, near_miss (with level and distance), breaking, unknown,
or version_silent when the chunk states nothing for that component.  Permissive
mode drops breaking content, penalises near misses by max(floor, 1 - step ×
distance), leaves silent content neutral and boosts satisfying content; strict
mode keeps only satisfying content.  With several targets the smallest
multiplier wins.  The semantics of constraints live in ``schemas.versions``.

A version a page only inherits from its docs version (origin ``inferred``, query/version_inference.py) is weaker
than its own: satisfying lifts by ``inferred_satisfies`` instead of ``satisfies``, an inferred break demotes by
``inferred_breaking`` instead of excluding, and when another passage of the page states a version of the component
that fails the target the inference is contradicted (``unknown``).  Strict mode keeps an inferred passage only
where it satisfies and nothing contradicts it, and says so in the target's evidence (``strict``).

Compile evidence (rows of origin ``compiled`` / ``compile_rejected``, one exact version per compiler that was
run: flows.compile_step) outranks what a passage declares: compiled by a compiler whose version is in the target
→ satisfies (origin ``compiled``); else rejected by such a compiler → breaking, the error quoted.  A compiler
outside the target says nothing about it, so then the declared constraints decide as before; the declared
verdict is shown beside a compiled one (``declared``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from trustindex.query.version_rows import VersionRow
from trustindex.schemas import version_parsers
from trustindex.schemas import versions as V
from trustindex.schemas.compilers import COMPILE_ORIGINS, COMPILER_COMPONENT, ORIGIN_COMPILED, ORIGIN_REJECTED
from trustindex.schemas.components import LABEL_COMPONENTS, NETWORK
from trustindex.schemas.docs_versions import COMPONENT as DOCS
from trustindex.schemas.docs_versions import names_of
from trustindex.schemas.errors import QueryError
from trustindex.schemas.hit_factors import (
    CompileResult,
    Contradiction,
    DeclaredVerdict,
    Factor,
    TargetVerdict,
    VersionEvidence,
    VersionFactor,
)
from trustindex.schemas.policy import Policy
from trustindex.schemas.version_map import INFERRED


@dataclass(frozen=True)
class Target:
    component: str
    requested: str
    constraint: V.ConstraintSet


def parse_target(component: str, text: str) -> Target:
    component, text = component.strip(), str(text).strip()
    if not component or not text:
        raise QueryError(f"target {component}={text}: expected COMPONENT=VERSION_OR_RANGE")
    if component in LABEL_COMPONENTS:  # docs versions, networks: names (a folder's "0.0.0", "v1"), matched exactly
        label = text.casefold() if component == NETWORK else text  # networks are stored as the tab value writes them
        return Target(component, text, V.ConstraintSet.label(label))
    try:
        cs = version_parsers.parse_target(text)
    except V.VersionSyntaxError as e:
        raise QueryError(f"target {component}={text}: not a version or npm range ({e})") from None
    return Target(component, text, cs)


def parse_target_args(items: list[str] | dict[str, str] | None) -> list[Target]:
    if not items:
        return []
    pairs = items.items() if isinstance(items, dict) else []
    if not isinstance(items, dict):
        pairs = []
        for item in items:
            if "=" not in item:
                raise QueryError(f"target {item!r}: expected COMPONENT=VERSION_OR_RANGE")
            c, _, v = item.partition("=")
            pairs.append((c, v))
    return [parse_target(c, v) for c, v in pairs]


def docs_names(rows: list[VersionRow]) -> dict[str, str]:
    """Every name that selects a stored docs version (case-folded) → that version's name.

    A version's own name wins over another version's alias of the same spelling."""
    named = []
    for r in rows:
        got = names_of(r.intervals) if r.status == "parsed" and r.intervals else None
        named.append(got or (r.constraint, []))
    out = {name.casefold(): name for name, _ in named}
    for name, aliases in named:
        for a in aliases:
            out.setdefault(a.casefold(), name)
    return out


def resolve_docs_target(t: Target, names: dict[str, str]) -> tuple[Target, tuple[str | None, str]]:
    """A docs target by name, label or ``latest`` → the stored version name, and how it was resolved."""
    name = names.get(t.requested.casefold()) if t.component == DOCS else None
    if name is None:
        how = "unresolved: no docs version has this name or label" if t.component == DOCS else "as written"
        return t, (None if t.component == DOCS else t.requested, how)
    how = "name" if name == t.requested else f"alias of docs version {name!r}"
    return Target(t.component, t.requested, V.ConstraintSet.label(name)), (name, how)


_ORDER = {"satisfies": 0, "near_miss": 1, "unknown": 2, "breaking": 3}


def _classify_row(row: VersionRow, target: Target) -> V.Match:
    if row.status != "parsed" or not row.intervals:
        return V.Match("unknown", detail=f"constraint {row.constraint!r} could not be parsed")
    try:
        return V.classify(V.ConstraintSet.from_json(row.intervals), target.constraint)
    except Exception as e:  # a constraint stored by an older build: unknown, never guessed
        return V.Match("unknown", detail=str(e))


def _classify_rows(rows: list[VersionRow], target: Target) -> tuple[V.Match, VersionRow]:
    """The best verdict among a component's stored constraints (at least one), and the row that gave it."""
    verdicts = [(_classify_row(r, target), r) for r in rows]
    return min(verdicts, key=lambda mr: (_ORDER.get(mr[0].status, 2), mr[0].distance or 0))


def compile_results(rows_by_component: dict[str, list[VersionRow]]) -> tuple[CompileResult, ...]:
    """Each compiler run on the passage (its compact-compiler row): passed or rejected, and the detail."""
    rows = [r for r in rows_by_component.get(COMPILER_COMPONENT, []) if r.origin in COMPILE_ORIGINS]
    return tuple(CompileResult(f"compactc {r.constraint}", r.origin == ORIGIN_COMPILED, r.detail) for r in rows)


def _in_target(row: VersionRow, target: Target) -> bool:
    try:
        return row.status == "parsed" and V.ConstraintSet.from_json(row.intervals or "").intersects(target.constraint)
    except Exception:  # a row of an older build: no evidence, never guessed
        return False


def _compiled_verdict(rows: list[VersionRow], target: Target) -> tuple[V.Match, VersionRow] | None:
    """The verdict of the compilers whose version is in the target (None: none of them was run)."""
    inside = [r for r in rows if _in_target(r, target)]
    for origin, status in ((ORIGIN_COMPILED, "satisfies"), (ORIGIN_REJECTED, "breaking")):
        hit = next((r for r in inside if r.origin == origin), None)
        if hit is not None:
            return V.Match(status, detail=hit.detail or ""), hit
    return None


def _verdict(rows: list[VersionRow], target: Target) -> tuple[V.Match, VersionRow, DeclaredVerdict | None]:
    """The verdict for one component: compile evidence first, then declarations; and the declared verdict
    shown beside a compiled one."""
    compiled = [r for r in rows if r.origin in COMPILE_ORIGINS]
    declared = [r for r in rows if r.origin not in COMPILE_ORIGINS]
    got = _compiled_verdict(compiled, target) if compiled else None
    if got is None:
        if declared:
            m, row = _classify_rows(declared, target)
            return m, row, None
        names = ", ".join(sorted({(r.detail or "").split(":", 1)[0] for r in compiled}))
        return V.Match("unknown", detail=f"no compiler of this target was run ({names})"), compiled[0], None
    if not declared:
        return got[0], got[1], None
    dm, drow = _classify_rows(declared, target)
    return got[0], got[1], DeclaredVerdict(dm.status, drow.constraint, drow.origin)


def version_factor(
    rows_by_component: dict[str, list[VersionRow]], targets: list[Target], policy: Policy, strict: bool
) -> tuple[VersionFactor, bool]:
    """The factor for one chunk, and whether the chunk is excluded."""
    if not targets:
        return _no_target(rows_by_component), False
    if not any(rows_by_component.get(t.component) for t in targets):  # most candidates state none of them
        return _silent(tuple((t.component, t.requested) for t in targets), policy.version.silent), strict
    results, multipliers, excluded = [], [], False
    worst_status = "satisfies"
    for t in targets:
        rows = rows_by_component.get(t.component, [])
        if not rows:
            v = _Judged("version_silent", policy.version.silent, _SILENT)
        else:
            v = _judged(rows, t, policy)
        if (v.status == "breaking" and not v.inferred) or (strict and v.status != "satisfies"):
            excluded = True
        multipliers.append(v.multiplier)
        if _RANK[v.status] > _RANK[worst_status]:
            worst_status = v.status
        results.append(v.shown(t, strict))
    return Factor(float(min(multipliers)), worst_status, VersionEvidence(targets=tuple(results))), excluded


_RANK = {"satisfies": 0, "version_silent": 1, "unknown": 2, "near_miss": 3, "breaking": 4}
_SILENT = "states no version"


@lru_cache(maxsize=256)
def _silent(targets: tuple[tuple[str, str], ...], multiplier: float) -> VersionFactor:
    """The factor of a passage that states a version of none of the targets (``(component, requested)``): the same
    for every such passage of a search, so worked out once and shared (frozen), as most of a pool is."""
    shown = tuple(TargetVerdict(c, r, "version_silent", None, None, _SILENT, None, None) for c, r in targets)
    return Factor(float(multiplier), "version_silent", VersionEvidence(targets=shown))


def _no_target(rows_by_component: dict[str, list[VersionRow]]) -> VersionFactor:
    """Without targets: the passage's own constraints (and compile results); inferred ones are not its own."""
    not_stated = {*COMPILE_ORIGINS, INFERRED}
    comps = {c: [r.constraint for r in rs if r.origin not in not_stated] for c, rs in rows_by_component.items()}
    constraints = {c: v for c, v in comps.items() if v}
    evidence = VersionEvidence(constraints=constraints, compiled=compile_results(rows_by_component) or None)
    return Factor(1.0, "no_target", evidence)


@dataclass(frozen=True)
class _Judged:
    """One target's verdict on one passage, and its multiplier."""

    status: str
    multiplier: float
    detail: str
    match: V.Match | None = None
    row: VersionRow | None = None
    declared: DeclaredVerdict | None = None
    contradicted_by: Contradiction | None = None  # the page's own row an inferred verdict yields to

    @property
    def inferred(self) -> bool:
        return self.row is not None and self.row.origin == INFERRED

    def shown(self, t: Target, strict: bool) -> TargetVerdict:
        m, row, inferred = self.match, self.row, self.inferred
        word = None
        if inferred and strict:
            word = (
                "accepted: inferred from the docs version, and nothing on the page contradicts it"
                if self.status == "satisfies"
                else "refused: strict mode accepts an inferred version only when it satisfies the target and "
                "nothing on the page contradicts it"
            )
        return TargetVerdict(
            component=t.component,
            target=t.requested,
            status=self.status,
            level=m.level if m else None,
            distance=m.distance if m else None,
            detail=self.detail,
            constraint=row.constraint if row else None,
            origin=row.origin if row else None,
            declared=self.declared,
            inferred=True if inferred else None,
            contradicted_by=self.contradicted_by if inferred else None,
            strict=word,
        )


def _judged(rows: list[VersionRow], t: Target, policy: Policy) -> _Judged:
    p = policy.version
    m, row, declared = _verdict(rows, t)
    inferred = row.origin == INFERRED
    status, detail = m.status, m.detail
    against = _contradiction(row, t) if inferred and status == "satisfies" else None
    if against is not None:
        status = "unknown"
        detail = (
            f"{row.detail}; but the page itself states {against.constraint} ({against.origin}), "
            f"which does not satisfy {t.requested}"
        )
    elif inferred:
        detail = "; ".join(x for x in (row.detail, m.detail) if x)
    if status == "satisfies":
        mult = p.inferred_satisfies if inferred else p.satisfies
    elif status == "near_miss":
        step = p.minor_step if m.level == "minor" else p.patch_step
        mult = max(p.near_miss_floor, 1.0 - step * (m.distance or 0))
    elif status == "breaking":
        mult = p.inferred_breaking if inferred else 0.0
    else:
        mult = p.unknown
    return _Judged(status, mult, detail, m, row, declared, against)


def _contradiction(row: VersionRow, t: Target) -> Contradiction | None:
    """The first of the page's own rows of this component (other passages') that does not satisfy the target."""
    for own in getattr(row, "page", ()):
        if _classify_row(own, t).status != "satisfies":
            return Contradiction(own.constraint, own.origin, own.detail)
    return None


def satisfied_targets(factor: VersionFactor) -> list[str]:
    """The targets (``component=version``) a passage satisfies, when it satisfies every one of them (by its own
    evidence, or by what its docs version infers and nothing on its page contradicts: marked ``(inferred)``);
    none when any target is unsatisfied."""
    shown = factor.evidence.targets or ()
    if shown and all(r.status == "satisfies" for r in shown):
        return [f"{r.component}={r.target}" + (" (inferred)" if r.inferred else "") for r in shown]
    return []


def page_satisfies(rows_by_component: dict[str, list[VersionRow]], targets: list[Target]) -> bool:
    """Whether a page's document-scoped rows satisfy every target (the current copy of a legacy page)."""
    for t in targets:
        rows = rows_by_component.get(t.component, [])
        if not rows or _judged_status(rows, t) != "satisfies":
            return False
    return True


def _judged_status(rows: list[VersionRow], t: Target) -> str:
    m, row, _declared = _verdict(rows, t)
    if row.origin == INFERRED and m.status == "satisfies" and _contradiction(row, t) is not None:
        return "unknown"
    return m.status
