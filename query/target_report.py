"""The response's ``targets``: each requested component resolved against the snapshot (the registry's alias or
family, a spelling of a merged name, a package of a name's family: query/component_names.py; a docs label to its
version name), or one line refusing a component the snapshot has never seen, with up to three close names."""

from __future__ import annotations

from trustindex.query.target_match import Target, resolve_docs_target
from trustindex.schemas.components import LABEL_COMPONENTS
from trustindex.schemas.docs_versions import COMPONENT as DOCS_COMPONENT
from trustindex.schemas.errors import QueryError
from trustindex.schemas.hit_parts import TargetShown

_NOT_RENAMED = frozenset({"component_requested", "component_resolution"})  # keys a target named as stored leaves out


def target_report(st, targets: list[Target]) -> tuple[list[TargetShown], list[Target]]:
    """The response's ``targets`` (with how each name was resolved) and the targets to match with."""
    data = st.data
    out, resolved = [], []
    for t in targets:
        asked, resolution = t.component, "as written"
        if asked not in LABEL_COMPONENTS:
            named = data.component_names.resolve(asked)
            if named.component is None or named.component not in data.components:
                raise QueryError(_unknown(data, t))
            t, resolution = Target(named.component, t.requested, t.constraint), named.how
        elif asked not in data.components:
            raise QueryError(_unknown(data, t))
        seen = sorted(data.components.get(t.component, set()))
        if t.component == DOCS_COMPONENT:
            t, (name, how) = resolve_docs_target(t, st.docs_names())
        else:
            name, how = t.requested, "as written"
        resolved.append(t)
        renamed = asked != t.component
        shown = TargetShown(
            component=t.component,
            requested=t.requested,
            component_requested=asked if renamed else None,
            component_resolution=resolution if renamed else None,
            known_component=True,
            constraints_seen=seen[:50],
            resolved=name,
            resolution=how,
            absent=frozenset() if renamed else _NOT_RENAMED,
        )
        out.append(shown)
    return out, resolved


def _unknown(data, t: Target) -> str:
    """One line: the unknown name, and the closest names the snapshot has (or where to find them all)."""
    close = data.component_names.suggest(t.component) if t.component not in LABEL_COMPONENTS else []
    hint = (
        f"did you mean {' or '.join(close)}?"
        if close
        else f"no close name among its {len(data.components)} components (list_versions lists them)"
    )
    return f"target {t.component}={t.requested}: this snapshot has no content for component {t.component!r}; {hint}"
