"""Scale-out: the refresh's per-source tasks run on an existing Dask cluster (prefect-dask)."""

from tests.gitutil import RepoBuilder
from trustindex.schemas.config import BuildConfig, Identities, Publisher, Source
from trustindex.schemas.policy import Policy
from trustindex.schemas.refresh_run import RefreshRequest
from trustindex.schemas.snapshot import verify_snapshot


def test_refresh_runs_on_a_dask_cluster_over_loopback(tmp_path, prefect_harness):
    from distributed import Client, LocalCluster

    from trustindex.flows.refresh import refresh_flow, with_task_runner

    repos = []
    for n in ("one", "two"):
        b = RepoBuilder(tmp_path / n)
        b.commit(
            {f"docs/{n}-{i}.md": f"# {n} {i}\n\nPage {i} of source {n} about shielded tokens.\n" for i in range(3)},
            f"{n} docs",
        )
        repos.append(Source(name=n, url=str(b.path), ref="main", publisher="mf", include=("**/*.md",)))
    ids = Identities()
    ids.publishers["mf"] = Publisher("mf", "MF", "foundation")
    # a real scheduler and worker talking TCP on loopback (workers in-process, so they share the test's Prefect API)
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=2,
            processes=False,
            protocol="tcp://",
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        result = with_task_runner(refresh_flow, cluster.scheduler_address)(
            BuildConfig(repos, ids, [], Policy.default()), RefreshRequest(str(tmp_path / "data"))
        )
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert not result.failures and result.published
    assert {s.source for s in result.sources} == {"one", "two"}
    assert "ingest_source_task" in prefixes, prefixes  # the per-source tasks ran on the cluster
    verify_snapshot(tmp_path / "data" / "snapshots" / result.snapshot_id)
