import pytest

from trustindex.extractors.globs import matches


@pytest.mark.parametrize(
    "path, pattern, expected",
    [
        ("docs/a.md", "**/*.md", True),
        ("a.md", "**/*.md", True),
        ("docs/x/y/a.mdx", "docs/**", True),
        ("blog/2024/post.md", "blog/**", True),
        ("docs/blog/post.md", "blog/**", False),
        ("docs/a.md", "*.md", True),  # no slash: matches the basename anywhere
        ("docs/a.md", "docs/*.md", True),
        ("docs/x/a.md", "docs/*.md", False),
        ("src/dapp-examples-deprecated/x.ts", "**/*-deprecated/**", True),
        ("package.json", "**/package.json", True),
        ("a.mdx", "**/*.md", False),
    ],
)
def test_glob(path, pattern, expected):
    assert matches(path, pattern) is expected
