"""Attribution: who published a document, from the operator's configuration only.

The publisher is the source's publisher unless a ``publisher_override`` glob
of that source matches the path (first match wins).  Front matter or any
other file content never enters here: a repository cannot name its own
publisher.  The last author is evidence (shown), not authority.
"""

from __future__ import annotations

from trustindex.extractors.globs import matches
from trustindex.schemas.config import Identities, Source


def attribute(source: Source, path: str, ids: Identities, author_name: str = "", author_email: str = "") -> dict:
    publisher, origin = source.publisher, "source"
    for o in source.publisher_overrides:
        if matches(path, o.path):
            publisher, origin = o.publisher, f"publisher_override:{o.path}"
            break
    pub = ids.publishers.get(publisher)
    person = ids.person_by_email(author_email) if author_email else None
    return {
        "publisher": publisher,
        "publisher_name": pub.name if pub else publisher,
        "tier": pub.tier if pub else "unknown",
        "origin": origin,
        "author_name": author_name,
        "author_email": author_email,
        "author_publisher": person.publisher if person else "",
    }
