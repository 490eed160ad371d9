import pytest

from trustindex.schemas.config import check_sources_against, load_identities, load_ledger, load_sources
from trustindex.schemas.errors import ConfigError

IDS = """
[[publisher]]
id = "mf"
name = "Midnight Foundation"
tier = "foundation"
[[person]]
name = "Ada"
emails = ["Ada@Example.org"]
publisher = "mf"
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_sources_resolve_relative_paths(tmp_path):
    f = write(tmp_path, "sources.toml", '[[source]]\nname = "docs"\nurl = "repos/docs"\npublisher = "mf"\n')
    (s,) = load_sources(f)
    assert s.url == str(tmp_path / "repos" / "docs")
    assert s.ref == "HEAD" and s.include == ("**/*.md", "**/*.mdx", "**/*.rst")  # no ref: the remote's default branch


@pytest.mark.parametrize(
    "text, key, words",
    [
        ('[[source]]\nurl = "x"\npublisher = "mf"\n', "source[0].name", "missing"),
        ('[[source]]\nname = "a b"\nurl = "x"\npublisher = "mf"\n', "source[0].name", "letters"),
        ('[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\nincludes = []\n', "source[0].includes", "unknown key"),
        ('[[source]]\nname = "a"\nurl = "x"\npublisher = "mf"\ninclude = "*.md"\n', "source[a].include", "list"),
        ("source = 3\n", "source", "at least one"),
    ],
)
def test_bad_sources_name_file_and_key(tmp_path, text, key, words):
    f = write(tmp_path, "sources.toml", text)
    with pytest.raises(ConfigError) as e:
        load_sources(f)
    assert e.value.key == key and words in e.value.problem and str(f) in str(e.value)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="sources file not found"):
        load_sources(tmp_path / "nope.toml")


def test_identities_map_emails_case_insensitively(tmp_path):
    ids = load_identities(write(tmp_path, "identities.toml", IDS))
    assert ids.person_by_email("ada@example.org").name == "Ada"
    assert ids.person_by_email("ada@elsewhere.org") is None
    assert ids.tier_of("mf") == "foundation" and ids.tier_of("nobody") == "unknown"


def test_identities_reject_unknown_tier_and_publisher(tmp_path):
    with pytest.raises(ConfigError, match="tier"):
        load_identities(write(tmp_path, "i.toml", '[[publisher]]\nid = "x"\ntier = "gold"\n'))
    with pytest.raises(ConfigError, match="unknown publisher"):
        load_identities(write(tmp_path, "j.toml", IDS + '[[person]]\nname = "B"\npublisher = "zz"\n'))


def test_sources_must_name_known_publishers(tmp_path):
    ids = load_identities(write(tmp_path, "identities.toml", IDS))
    srcs = load_sources(write(tmp_path, "sources.toml", '[[source]]\nname = "a"\nurl = "x"\npublisher = "zz"\n'))
    with pytest.raises(ConfigError, match="not in identities.toml"):
        check_sources_against(srcs, ids, "sources.toml")


def test_ledger_is_optional_and_validated(tmp_path):
    assert load_ledger(tmp_path / "absent.toml") == []
    f = write(
        tmp_path,
        "v.toml",
        '[[verification]]\nsource = "a"\npath = "docs/**"\ncommit = "v1"\nverifier = "ada@example.org"\n',
    )
    (e,) = load_ledger(f)
    assert e.method == "ledger" and e.commit == "v1"
    with pytest.raises(ConfigError, match="missing required key"):
        load_ledger(write(tmp_path, "w.toml", '[[verification]]\nsource = "a"\n'))
