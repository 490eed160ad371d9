"""Real git repositories with backdated, timezone-aware history for tests."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import git

T0 = datetime(2025, 1, 6, 9, 30, tzinfo=timezone(timedelta(hours=-5)))


class RepoBuilder:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.repo = git.Repo.init(self.path, initial_branch="main")
        self.t = T0

    def commit(
        self,
        files: dict[str, str | bytes | None],
        message: str,
        author=("Ada", "ada@example.org"),
        days: float = 1.0,
        when: datetime | None = None,
    ) -> str:
        self.t = when or (self.t + timedelta(days=days))
        for rel, content in files.items():
            p = self.path / rel
            if content is None:
                self.repo.index.remove([rel], working_tree=True)
                continue
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(content if isinstance(content, bytes) else content.encode())
            self.repo.index.add([rel])
        actor = git.Actor(*author)
        c = self.repo.index.commit(message, author=actor, committer=actor, author_date=self.t, commit_date=self.t)
        return c.hexsha

    def merge(self, branch_commits: list[dict], title: str, merger=("Ada", "ada@example.org"), pr: int = 1) -> str:
        """Commit ``branch_commits`` on a side branch, then merge it with a pull-request merge commit."""
        base = self.repo.head.commit
        side = self.repo.create_head(f"pr-{pr}", base)
        self.repo.head.reference = side
        self.repo.head.reset(index=True, working_tree=True)
        for bc in branch_commits:
            self.commit(**bc)
        tip = self.repo.head.commit
        self.repo.head.reference = self.repo.heads.main
        self.repo.head.reset(index=True, working_tree=True)
        self.repo.index.merge_tree(tip, base=base)
        self.t += timedelta(hours=2)
        actor = git.Actor(*merger)
        c = self.repo.index.commit(
            f"Merge pull request #{pr} from org/{title}\n\n{title}",
            parent_commits=(self.repo.head.commit, tip),
            author=actor,
            committer=actor,
            author_date=self.t,
            commit_date=self.t,
        )
        self.repo.head.reset(index=True, working_tree=True)
        return c.hexsha


def refresh_one_source(root: Path, repo: str, name: str, include: tuple[str, ...]) -> Path:
    """A real refresh of the repository ``root/repo`` as the only source ``name`` (publisher ``foundation``, tier
    foundation) into ``root/data``, returned; the caller's fixture holds Prefect's test harness."""
    from trustindex.cli.build import run_refresh
    from trustindex.schemas.config import load_build_config
    from trustindex.schemas.refresh_run import RefreshRequest

    patterns = ", ".join(f'"{p}"' for p in include)
    (root / "sources.toml").write_text(
        f'[[source]]\nname = "{name}"\nurl = "{repo}"\nref = "main"\npublisher = "foundation"\n'
        f"include = [{patterns}]\nexclude = []\n"
    )
    (root / "identities.toml").write_text('[[publisher]]\nid = "foundation"\nname = "F"\ntier = "foundation"\n')
    run_refresh(load_build_config(str(root / "sources.toml")), RefreshRequest(str(root / "data")))
    return root / "data"


def ingest_files(tmp_path: Path, files: dict[str, str], name: str = "app", source_lines: str = ""):
    """``files`` committed to a real repository under ``tmp_path/repo`` and ingested as the only source ``name`` (no
    include unless ``source_lines``, TOML lines of its ``[[source]]``, say one), default policy: the
    ``SourceResult`` of ``ingest_source``."""
    from trustindex.extractors.base import approx_token_count
    from trustindex.ingest.source import IngestRun, ingest_source
    from trustindex.schemas.config import Identities, load_sources
    from trustindex.schemas.policy import Policy

    rb = RepoBuilder(tmp_path / "repo")
    rb.commit(files, f"the {name} repository")
    (tmp_path / "sources.toml").write_text(
        f'[[source]]\nname = "{name}"\nurl = "{rb.path}"\nref = "main"\npublisher = "p"\n{source_lines}'
    )
    (src,) = load_sources(tmp_path / "sources.toml")
    return ingest_source(src, tmp_path / "data", Identities(), [], Policy.default(), approx_token_count, IngestRun())
