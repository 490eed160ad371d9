"""Where an export goes (warehouse/export.py): a local directory, a ``file://`` URI or ``s3://bucket/prefix``,
opened as a pyarrow filesystem; S3 credentials come from the environment through the AWS SDK's default chain."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from trustindex.schemas.errors import TrustIndexError, one_line


class ExportError(TrustIndexError):
    """An export could not complete; the message names the snapshot, the target and what to do."""


@dataclass(frozen=True)
class Target:
    """Where a snapshot goes: a pyarrow filesystem, the base path in it, and a label for messages."""

    fs: pafs.FileSystem
    base: str  # "bucket/prefix" for S3, an absolute path for a local directory
    label: str  # what the user typed, normalised: "s3://bucket/prefix" or "/abs/path"
    local: Path | None = None  # set for a local directory: enables fsync and rename

    def path(self, *parts: str) -> str:
        return "/".join([self.base.rstrip("/"), *parts]) if self.base else "/".join(parts)


def _parse_endpoint(endpoint: str) -> tuple[str, str]:
    """``http://host:port`` -> ("host:port", "http"); a bare ``host:port`` means https."""
    if "://" not in endpoint:
        return endpoint.strip("/"), "https"
    u = urlparse(endpoint)
    if u.scheme not in ("http", "https") or not u.netloc:
        raise ExportError(
            f"endpoint {endpoint!r}: expected http://host:port or https://host; fix --endpoint or AWS_ENDPOINT_URL"
        )
    return u.netloc, u.scheme


def open_target(to: str, endpoint: str | None = None) -> Target:
    """Resolve ``to`` (a local path, ``file://`` URI or ``s3://bucket/prefix``) to a filesystem.

    Errors read "<to>: <problem>; <what to do>"; ``export_snapshot`` prefixes the snapshot.
    """
    if not to or not to.strip():
        raise ExportError("(empty target): give a directory or s3://bucket/prefix")
    to = to.strip()
    if to.startswith("s3://"):
        rest = to[len("s3://") :].strip("/")
        bucket, _, prefix = rest.partition("/")
        if len(bucket) < 3:
            raise ExportError(f"{to}: bucket name {bucket!r} is too short (S3 needs 3-63 characters); fix --to")
        prefix = prefix.strip("/")
        kwargs: dict = {"allow_bucket_creation": True}
        if endpoint:
            try:
                kwargs["endpoint_override"], kwargs["scheme"] = _parse_endpoint(endpoint)
            except ExportError as e:
                raise ExportError(f"{to}: {e}") from None
        try:
            fs = pafs.S3FileSystem(**kwargs)
        except (OSError, pa.ArrowException) as e:
            raise ExportError(
                f"{to}: cannot open S3 ({one_line(e)}); check the endpoint and AWS_* credentials in the environment"
            ) from None
        base = f"{bucket}/{prefix}" if prefix else bucket
        return Target(fs=fs, base=base, label=f"s3://{base}")
    if "://" in to and not to.startswith("file://"):
        raise ExportError(f"{to}: unsupported scheme; use a directory path or s3://bucket/prefix")
    path = Path(urlparse(to).path if to.startswith("file://") else to).expanduser().resolve()
    return Target(fs=pafs.LocalFileSystem(), base=path.as_posix(), label=str(path), local=path)
