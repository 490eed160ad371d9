import pytest

from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy import Policy


def test_default_policy_has_stable_id():
    assert Policy.default().policy_id == Policy.default().policy_id
    assert Policy.default().policy_id.startswith("sha256:")


def test_editing_a_value_changes_the_id():
    a = Policy.default()
    b = Policy.from_dict({"deprecation": {"multiplier": 0.2}})
    assert a.policy_id != b.policy_id
    assert b.deprecation.multiplier == 0.2
    assert b.attribution.tiers.foundation == a.attribution.tiers.foundation


@pytest.mark.parametrize(
    "given, key, words",
    [
        ({"deprecation": {"multiplyer": 0.2}}, "deprecation.multiplyer", "unknown key"),
        ({"freshness": {"half_life_days": "long"}}, "freshness.half_life_days", "expected"),
        ({"match": {"high_ceiling": 1.5}}, "match.high_ceiling", "out of range"),
        ({"attribution": {"tiers": {"foundation": True}}}, "attribution.tiers.foundation", "expected"),
        ({"fusion": 3}, "fusion", "expected a table"),
        ({"match": {"low_ceiling": 0.9}}, "match", "ceilings must rise"),
    ],
)
def test_invalid_policy_names_the_key(given, key, words):
    with pytest.raises(ConfigError) as e:
        Policy.from_dict(given, "policy.toml")
    assert e.value.key == key
    assert words in str(e.value)
    assert str(e.value).startswith("policy.toml: ")


def test_policy_round_trips_through_toml(tmp_path):
    p = Policy.from_dict({"freshness": {"half_life_days": 200}})
    f = tmp_path / "policy.toml"
    f.write_text(p.to_toml())
    assert Policy.load(f).policy_id == p.policy_id


def test_malformed_toml_is_a_clear_error(tmp_path):
    f = tmp_path / "policy.toml"
    f.write_text("[freshness\nhalf_life_days = 3")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Policy.load(f)


def test_every_key_has_a_rule_and_its_default_passes_it():
    import dataclasses

    from trustindex.schemas.policy_sections import Sections

    def keys(section, prefix=""):
        for f in dataclasses.fields(section):
            if "section" in f.metadata:
                yield from keys(f.metadata["section"], f"{prefix}{f.name}.")
            else:
                assert "rule" in f.metadata, f"{prefix}{f.name} has no rule"
                yield f"{prefix}{f.name}"

    names = list(keys(Sections))
    assert len(names) == len(set(names)) > 80
    # the defaults, written back as a file, load to the same policy (every default is within its own range)
    p = Policy.without_shipped_calibration()
    assert Policy.from_dict(p.to_dict()).to_dict() == Policy.from_dict({}).to_dict() | {"match": p.to_dict()["match"]}


def test_a_section_is_frozen_and_typed():
    import dataclasses

    p = Policy.default()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.freshness.floor = 0.1
    assert isinstance(p.verification.methods, tuple) and p.attribution.tiers.of(None) == p.attribution.tiers.unknown


def test_a_key_named_when_set_leaves_the_id_alone_at_its_default():
    """The focus terms (issue 43) were added switched off: the default policy's id, and so every response, is the
    one it was before them; set to anything else, the id names them."""
    base = Policy.default().policy_id
    assert Policy.from_dict({"fusion": {"page_focus_weight": 0.0, "focus_share": 0.6}}).policy_id == base
    assert Policy.from_dict({"fusion": {"page_focus_weight": 0.2}}).policy_id != base
    assert Policy.from_dict({"fusion": {"focus_share": 0.5}}).policy_id != base
    assert Policy.from_dict({"fusion": {"page_weight": 0.2}}).policy_id != base  # every other key is named as before
