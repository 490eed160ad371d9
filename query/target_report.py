"""The response's ``targets``: each requested component resolved against the snapshot (an alias to its canonical
id, a docs label to its version name), or a clear error for a component the snapshot has never seen."""

from __future__ import annotations

from trustindex.query.target_match import Target, resolve_docs_target
from trustindex.schemas.components import LABEL_COMPONENTS
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.errors import QueryError


def target_report(st, targets: list[Target]) -> tuple[list[dict], list[Target]]:
    """The response's ``targets`` (with how each name was resolved) and the targets to match with."""
    data = st.data
    out, resolved = [], []
    for t in targets:
        # a component named by an alias (a display name, a package of a family) is its canonical id
        asked, named = t.component, data.registry.resolve(t.component)
        if t.component not in LABEL_COMPONENTS and named.component != t.component:
            t = Target(named.component, t.requested, t.constraint)
        seen = sorted(data.components.get(t.component, set()))
        if t.component not in data.components:
            known = ", ".join(sorted(data.components)) or "none"
            raise QueryError(
                f"target {t.component}={t.requested}: this snapshot has no content for component "
                f"{t.component!r} (known: {known})"
            )
        if t.component == DOCS_COMPONENT:
            t, how = resolve_docs_target(t, st.docs_names())
        else:
            how = {"resolved": t.requested, "resolution": "as written"}
        resolved.append(t)
        renamed = {"component_requested": asked, "component_resolution": named.how} if asked != t.component else {}
        out.append(
            {
                "component": t.component,
                "requested": t.requested,
                **renamed,
                "known_component": True,
                "constraints_seen": seen[:50],
                **how,
            }
        )
    return out, resolved
