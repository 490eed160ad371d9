"""``trustindex serve``'s access options (scoped tokens, SSO, the audit log) as the typed specs the server reads
(serve/access.py ``AccessSpec``, serve/oidc.py ``OidcSpec``, serve/audit.py ``AuditSpec``)."""

from __future__ import annotations

from pathlib import Path

from trustindex.schemas.errors import TrustIndexError
from trustindex.serve.access import AccessSpec
from trustindex.serve.audit import AuditSpec
from trustindex.serve.oidc import DEFAULT_ALGORITHMS, OidcSpec


def _path(value: str | None) -> str | None:
    return str(Path(value).resolve()) if value else None  # workers of --workers N get the same file


def access_options(a) -> dict:
    """``ServeConfig``'s ``access`` and ``audit`` from the parsed command line."""
    if a.audit_max_bytes < 1024 or a.audit_backups < 0 or a.audit_queue < 1:
        raise TrustIndexError(
            "--audit-max-bytes must be at least 1024, --audit-backups 0 or more, --audit-queue 1 or more"
        )
    oidc = OidcSpec(
        issuer=a.oidc_issuer,
        audience=a.oidc_audience,
        jwks_file=_path(a.oidc_jwks),
        scope_claim=a.oidc_scope_claim,
        subject_claim=a.oidc_subject_claim,
        algorithms=tuple(a.oidc_algorithms or DEFAULT_ALGORITHMS),
    )
    audit = AuditSpec(
        path=_path(a.audit_log),
        hash_queries=a.audit_hash_queries,
        max_bytes=a.audit_max_bytes,
        backups=a.audit_backups,
        queue_size=a.audit_queue,
    )
    return {"access": AccessSpec(tokens_file=_path(a.tokens_file), oidc=oidc), "audit": audit}
