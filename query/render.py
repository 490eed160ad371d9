"""A readable table of a response, and the per-hit breakdown for ``--explain``."""

from __future__ import annotations

import textwrap

from trustindex.query.explain import formula_lines
from trustindex.query.response import Hit, SearchResponse, as_hit, as_response
from trustindex.query.score import FORMULA
from trustindex.schemas.hit_factors import DeprecationEvidence, Factor, VerificationLink, VersionEvidence
from trustindex.schemas.hit_parts import PagePassage, Provenance
from trustindex.schemas.trust_factors import FACTORS

CALIBRATION_NAMES = {
    "default": ("the shipped calibration", "fitted on the project's judged real-docs queries"),
    "operator": ("the operator's calibration", "fitted by trustindex calibrate"),
}


def answer_line(r: SearchResponse) -> str:
    """The answer confidence with the calibration it comes from (or the best cosine when there is none)."""
    if r.answer_confidence is None:
        return f"best cosine {r.best_cosine:.3f} (uncalibrated: no answer confidence)"
    return f"answer confidence {r.answer_confidence:.2f} ({r.calibration_status} calibration {r.calibration_id})"


def explain_answer(r: SearchResponse) -> list[str]:
    """Why the answer confidence is what it is: the calibration, and the signals it read."""
    if r.answer_confidence is None or r.min_answer_confidence is None:
        return ["no calibration in this policy: the tier follows the best cosine (trustindex calibrate fits one)"]
    signals = ", ".join(f"{k} {v:.3f}" for k, v in r.answer_signals.items())
    name, how = CALIBRATION_NAMES.get(r.calibration_status, (r.calibration_status, ""))
    return [
        f"answer confidence {r.answer_confidence:.2f} = P(the top hit's page answers the query) under "
        f"{name} {r.calibration_id} ({how})",
        f"from {signals}; it abstains below {r.min_answer_confidence:.2f}",
    ]


def sources_text(r: SearchResponse) -> str:
    """The sources the hits come from, each with its commit and date, and a count of the rest: at 50 sources the
    whole list was a ~3,000-character line above every answer (issue 29)."""
    cited = {h.provenance.source for h in r.hits}
    shown = [s for s in r.sources if s.source in cited]
    rest = len(r.sources) - len(shown)
    text = ", ".join(f"{s.source} @ {(s.commit or '?')[:12]} ({(s.commit_date or '?')[:10]})" for s in shown)
    if not rest:
        return text
    more = f"{rest} {'other source' if rest == 1 else 'other sources'} in the snapshot"
    return f"{text} (+ {more})" if text else more


def states_text(constraints: dict) -> str:
    """What a page states of the versions it applies to, as text: ``docs: current; ledger: >=1.0``."""
    return "; ".join(f"{c}: {', '.join(map(str, v))}" for c, v in sorted(constraints.items()))


def chain_text(chain: tuple[VerificationLink, ...], people: int = 4) -> str:
    """A verification chain with each person named once: their links, each with how often it occurs (one
    merger of four commits was named four times)."""
    by_person: dict[str, dict[str, int]] = {}
    for c in chain:
        links = by_person.setdefault(c.verifier, {})
        text = _link(c)
        links[text] = links.get(text, 0) + 1
    parts = [
        " and ".join(f"{link} ×{n}" if n > 1 else link for link, n in links.items()) + f" by {person}"
        for person, links in list(by_person.items())[:people]
    ]
    if len(by_person) > people:
        parts.append(f"{len(by_person) - people} more people")
    return "; ".join(parts)


def _head(r: SearchResponse) -> list[str]:
    lines = [
        f"query: {r.query}",
        f"snapshot {r.snapshot_id} built {(r.built_at or '?')[:10]}  policy {r.policy_id[:19]}…  "
        f"match tier: {r.match_tier} · {answer_line(r)}",
    ]
    if r.sources:
        lines.append("sources: " + sources_text(r))
    for t in r.targets:
        lines.append(f"target {t.component}={t.requested}{'  (strict)' if r.strict else ''}")
    if r.abstained and r.abstention_reason == "low_confidence":
        lines.append(
            f"ABSTAINED: low_confidence — answer confidence {r.answer_confidence:.2f} is below the policy's "
            f"{r.min_answer_confidence:.2f}; the hits below are shown for reference, not as an answer"
        )
    elif r.abstained:
        lines.append(f"ABSTAINED: {r.abstention_reason} — no passage is good enough to answer from")
    if r.abstained and r.abstention_note:
        lines[-1] += f" ({r.abstention_note})"
    return lines


def render_table(response: SearchResponse | dict, explain: bool = False) -> str:
    """The response as a table of hits, each with its factors' multipliers (and with ``explain``, its breakdown)."""
    r = as_response(response)
    lines = _head(r)
    if explain:
        lines.extend(explain_answer(r))
        lines.append(f"order: {FORMULA}")
    if not r.hits:
        return "\n".join(lines + ["(no hits)"])
    lines.append("")
    lines.append(
        f"{'#':>2} {'shown':>5} {'rank':>5} {'trust':>5}  "
        + " ".join(x.column.rjust(_width(x.column)) for x in FACTORS)
        + "  source / path  § heading"
    )
    for h in r.hits:
        p = h.provenance
        lines.append(
            f"{h.rank_position:>2} {h.display_confidence * 100:>4.0f}% {h.ranking_score:>5.3f} {h.trust_score:>5.2f}  "
            + " ".join(f"{h.factors.multiplier(x.name):>4.2f}".rjust(_width(x.column)) for x in FACTORS)
            + f"  {p.file}:{p.start_line}  § {p.where}"
            + (f"  (+{len(h.same_page)} more on this page)" if h.same_page else "")
        )
        if explain:
            lines.extend("      " + x for x in explain_hit(h))
    return "\n".join(lines)


def _width(column: str) -> int:
    """A factor's column: its label's width, and room for a multiplier (0.00)."""
    return max(4, len(column))


def _link(c: VerificationLink) -> str:
    """One chain link without its verifier: its evidence class, and the tier it lends when that is not the
    verifier's (claimed)."""
    counts = f" → counts as {c.lends_tier}" if c.lends_tier != c.tier else ""
    stale = ", stale" if c.stale else ""
    return f"{c.evidence_class} {c.method} ({c.tier}{counts}{stale})"


_OLDER = {
    "legacy_docs_version": "legacy docs version",
    "legacy_docs_version_targeted": "legacy docs version, targeted",
    "unlabelled_docs_version": "earlier docs version's folder",
    "unlabelled_docs_version_targeted": "earlier docs version's folder, targeted",
}


def deprecation_line(dp: Factor[DeprecationEvidence]) -> str:
    """The deprecation factor in one line: a marker's reason, or a legacy page's doubt and what lifted it."""
    ev, markers = dp.evidence, dp.evidence.markers or ()
    if dp.status == "deprecated":
        m = markers[0]
        return f"deprecation ×{dp.multiplier:.2f}: {m.marker} ({m.scope}): {m.reason}"
    if dp.status not in _OLDER:
        return "deprecation ×1.00: not deprecated"
    why = markers[0].reason if markers else (ev.version_folder or "")
    by = ev.lifted_by
    lifted = (
        f"; not demoted: it is the version asked for ({', '.join(by)})"
        if by
        else ("; not demoted: the query names a docs version" if dp.status.endswith("_targeted") else "")
    )
    return f"deprecation ×{dp.multiplier:.2f} [{_OLDER[dp.status]}]: {why}{lifted}"


def _also(p: Provenance) -> str:
    """One place a hit's text is also found; a copy from another source says so (it yields to this hit)."""
    return f"{p.file} (copy of {p.copy_of}, yields to it)" if p.copy_of else p.file


def _section(p: PagePassage) -> str:
    """A passage folded under its page's hit: its section (else its lines) and its ranking_score."""
    return f"§ {p.where or f'lines {p.start_line}-{p.end_line}'} ({p.ranking_score:.3f})"


def explain_hit(hit: Hit | dict) -> list[str]:
    """One hit's breakdown: its formula with its numbers, its channels, and each factor's evidence in a line."""
    h = as_hit(hit)
    f, dense, lexical = h.factors, h.channels.dense, h.channels.lexical
    out = formula_lines(h) + [
        f"channels: dense rank {dense.rank}, cosine {dense.score:.3f}; "
        f"lexical rank {lexical.rank}, bm25 {lexical.score:.2f}"
    ]
    a = f.attribution.evidence
    out.append(
        f"attribution ×{f.attribution.multiplier:.2f}: {a.publisher_name or a.publisher} ({a.tier}, via {a.origin})"
    )
    v = f.verification
    out.append(
        f"verification ×{v.multiplier:.2f} [{v.status}]: {chain_text(v.evidence.chain) or 'no verification evidence'}"
    )
    fr = f.freshness.evidence
    out.append(
        f"freshness ×{f.freshness.multiplier:.2f}: last substantive change "
        f"{(fr.last_substantive_change or '')[:10]} ({fr.age_days:.0f} days), last modified "
        f"{(fr.last_modified or '')[:10]}"
    )
    if f.page_kind is not None:
        pk = f.page_kind
        out.append(f"page kind ×{pk.multiplier:.2f} [{pk.status}]: {pk.evidence.reason}")
    if f.deprecation is not None:
        out.append(deprecation_line(f.deprecation))
    if f.version_match is not None:
        out.extend(version_lines(f.version_match))
    cr = f.content_risk
    if cr is not None and cr.status != "no_findings":
        for x in cr.evidence.findings or ():
            out.append(f"content risk ×{cr.multiplier:.2f} [{x.kind}]: {x.reason} (line {x.start_line})")
    p = h.provenance
    if p.part_of:
        out.append(f"part of {p.part_of}: a partial that page renders (MDX import), cited at its page")
    if p.copy_of:
        out.append(f"copy of {p.copy_of} (the original, of a higher tier or older, is not a candidate here)")
    if h.also_in:
        out.append("also in: " + ", ".join(_also(a) for a in h.also_in[:5]))
    if h.same_page:
        out.append("more on this page: " + "; ".join(_section(p) for p in h.same_page))
    snippet = textwrap.shorten(h.text.replace("\n", " "), 160)
    out.append(f"“{snippet}”")
    return out


def version_lines(vm: Factor[VersionEvidence]) -> list[str]:
    """The version factor: each target's verdict (or, without targets, what the page states) and its compile checks."""
    ev = vm.evidence
    if vm.status == "no_target":
        cons = ev.constraints or {}
        return ["version ×1.00: no target given" + (f"; states {states_text(cons)}" if cons else "")]
    out = []
    for t in ev.targets or ():
        kind = f"{t.status}, inferred" if t.inferred else t.status
        strict = f"; strict: {t.strict}" if t.strict else ""
        declared = t.declared
        out.append(
            f"version ×{vm.multiplier:.2f} [{kind}]: {t.component} {t.target} vs "
            f"{t.constraint} ({t.origin}) {t.detail or ''}".rstrip()
            + strict
            + (f"; declared {declared.constraint} ({declared.origin}): {declared.status}" if declared else "")
        )
    out.extend(f"compile check: {c.detail}" for c in ev.compiled or ())
    return out
