"""A refresh's request and its results (issue 25 item 4): what the flows take beside the operator's configuration
(``schemas.config.BuildConfig``, loaded from the files ``ConfigFiles`` names) and what they report.

The entry points take these requests whole (issue 39 item 4): ``cli.build.run_refresh`` and the flows a Prefect
deployment runs (``flows.refresh.refresh_from_files``: ``ConfigFiles`` and a ``RefreshRequest``;
``flows.backfill.backfill_flow``: ``ConfigFiles`` and a ``BackfillRequest``), so a field is named once, here.

The results are typed and frozen; their ``to_json()`` is the contract the rest reads: the command line's
``--json`` and summary, ``data/last_run.json`` (warehouse/runs.py) and the flow run's markdown artifact.  Key
order and values are those of the dicts the flows returned before they were typed (tests/flows/test_refresh_result.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Self

from trustindex.schemas.config import BuildConfig, Source, load_build_config
from trustindex.schemas.embedding_model import DEFAULT_BACKEND

OK, FAILED = "ok", "failed"  # a source's status in a run


@dataclass(frozen=True)
class RefreshRequest:
    """What one run is asked to do: where, at which commits, and whether to publish.

    ``commits``: a commit per source name (else each source's ref).  ``fetch=False``: the caller has fetched every
    source's mirror in this run (a backfill, to resolve its commits); each is opened as it is, so a run fetches each
    source once.  ``max_sources``: source tasks run at once (a number or "all"; default
    TRUSTINDEX_SOURCES_AT_ONCE, else the usable cores), the rest queued.  ``rebuild``: build a new snapshot even
    when one already holds these inputs.  ``dask_address``: a Dask scheduler (``tcp://HOST:PORT``) whose workers
    embed the texts the embedding cache lacks, in content-hash shards (flows/embed_cluster.py)."""

    data_dir: str
    commits: Mapping[str, str] = field(default_factory=dict)
    publish: bool = True
    backend: str = DEFAULT_BACKEND
    force: bool = False
    rebuild: bool = False
    fetch: bool = True
    max_sources: int | str | None = None
    dask_address: str | None = None


@dataclass(frozen=True)
class ConfigFiles:
    """The operator's configuration files a run loads: ``sources`` (sources.toml), and the others, each defaulting
    to its file beside the sources file (identities.toml, policy.toml, verifications.toml, compilers.toml) where
    present (``schemas.config.load_build_config``)."""

    sources: str
    identities: str | None = None
    policy: str | None = None
    ledger: str | None = None
    compilers: str | None = None

    def load(self) -> BuildConfig:
        """Every file loaded and validated before any work starts."""
        return load_build_config(self.sources, self.identities, self.policy, self.ledger, compilers=self.compilers)


@dataclass(frozen=True)
class BackfillRequest:
    """What a backfill is asked to do: each source as it stood at the end of ``as_of``'s day (UTC; a full timestamp
    is kept as given), or at the commits pinned per source name (the rest as of the date, else at their ref).
    ``publish=False`` (the default) leaves CURRENT where it is; the other fields are ``RefreshRequest``'s."""

    data_dir: str = "data"
    as_of: str | None = None
    commits: Mapping[str, str] = field(default_factory=dict)
    publish: bool = False
    backend: str = DEFAULT_BACKEND
    force: bool = False

    def refresh(self, resolved: Mapping[str, str]) -> RefreshRequest:
        """The refresh that builds it, at the ``resolved`` commits, whose mirrors the backfill fetched already."""
        return RefreshRequest(self.data_dir, dict(resolved), self.publish, self.backend, self.force, fetch=False)


@dataclass(frozen=True)
class SourceRow:
    """How one source went in a run: a row of the snapshot manifest's ``sources`` and of the run's report."""

    source: str
    repo: str
    ref: str
    commit: str | None
    commit_date: str | None
    publisher: str
    tier: str
    config_sha256: str
    status: str = OK
    error: str | None = None
    note: str | None = None

    @classmethod
    def of(cls, source: Source, tier: str, **outcome) -> SourceRow:
        """The row of a configured source; ``outcome``: its commit, commit_date, status, error and note."""
        return cls(
            source.name,
            source.url,
            source.ref,
            outcome.pop("commit", None),
            outcome.pop("commit_date", None),
            source.publisher,
            tier,
            source.config_sha256,
            **outcome,
        )

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class EmbeddingCounts:
    """Chunk texts of a build: all of them, the distinct ones, those found in the cache, those encoded now."""

    total: int = 0
    distinct: int = 0
    cache_hits: int = 0
    encoded: int = 0

    def with_encoded_early(self, early: int) -> EmbeddingCounts:
        """Counts where ``early`` texts the source tasks encoded during extraction (and the build then found in the
        cache) are this run's work, not the cache's."""
        moved = min(early, self.cache_hits)
        return EmbeddingCounts(self.total, self.distinct, self.cache_hits - moved, self.encoded + moved)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Resources:
    """What a run used: source tasks at once, the embedding worker's mode, models loaded (flows/sources_run.py)."""

    sources_at_once: int
    embed_worker: str
    model_loads: int

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class BuildResult:
    """The build task's report: the snapshot built (or found already holding these inputs) and published."""

    snapshot_id: str
    published: bool
    reused_snapshot: bool
    row_counts: Mapping[str, int]
    embeddings: EmbeddingCounts
    forced_past_gate: tuple[str, ...]  # the safety gate's findings published past with --force
    stages: tuple[dict, ...]  # progress records (runtime/progress.py): stage, source, seconds, count, unit, rate

    def to_json(self) -> dict:
        return {
            "snapshot_id": self.snapshot_id,
            "published": self.published,
            "reused_snapshot": self.reused_snapshot,
            "row_counts": dict(self.row_counts),
            "embeddings": self.embeddings.to_json(),
            "forced_past_gate": list(self.forced_past_gate),
            "stages": list(self.stages),
        }


@dataclass(frozen=True)
class RefreshResult(BuildResult):
    """A whole run: the build, each source's row in configured order, the failures and what the run used.

    ``stages``: the sources' in configured order, then the compile checks', then the build's; ``compile``: the
    compile checks' report (None when no compiler is configured)."""

    sources: tuple[SourceRow, ...] = ()
    failures: Mapping[str, str] = field(default_factory=dict)  # source name → its error
    resources: Resources | None = None
    seconds: float = 0.0  # the flow's wall time
    flow_run_id: str | None = None
    compile: Mapping | None = None

    @classmethod
    def of(cls, build: BuildResult, **run) -> Self:
        """``build``'s fields (a build's or a whole run's), and ``run``'s: the run's own (a backfill's ``as_of`` and
        ``commits``), or the build's stages and embeddings replaced."""
        return cls(**{**_fields_of(build), **run})

    def to_json(self) -> dict:
        out = super().to_json()
        if self.compile is not None:
            out["compile"] = dict(self.compile)
        out["failures"] = dict(self.failures)
        out["resources"] = self.resources.to_json() if self.resources else None
        out["sources"] = [s.to_json() for s in self.sources]
        out["seconds"] = self.seconds
        out["flow_run_id"] = self.flow_run_id
        return out


@dataclass(frozen=True)
class BackfillResult(RefreshResult):
    """A backfill's run: the refresh's result, the end of the day asked for (None: commits pinned) and the commit
    each source was taken at."""

    as_of: str | None = None
    commits: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {**super().to_json(), "as_of": self.as_of, "commits": dict(self.commits)}


def _fields_of(result: BuildResult) -> dict:
    """A result's fields by name, their values as they are (``dataclasses.asdict`` would copy them into dicts)."""
    return {f.name: getattr(result, f.name) for f in fields(result)}
