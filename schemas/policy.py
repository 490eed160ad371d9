"""The scoring policy: every number of the trust formula, validated on load.

The policy is read at query time, so editing ``policy.toml`` changes scores with
no rebuild.  A response names the policy by ``policy_id``: the sha256 of the
canonical JSON of the merged policy (defaults overlaid with the file).
Build-time keys (ingest limits, allowlists, publish safety) live here too so
that one file holds every number.  The sections, their keys and ranges are the
frozen dataclasses of schemas/policy_sections.py; this module reads, merges and
checks a file against them and makes the typed ``Policy``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from trustindex.schemas.answer_signals import DEFAULT, OPERATOR, SIGNALS, UNCALIBRATED
from trustindex.schemas.content_risk import KINDS
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.policy_sections import (
    CALIBRATION_SETTINGS,
    NUMBER,
    TIERS,
    Match,
    Rule,
    Sections,
)

__all__ = ["CALIBRATION_KEYS", "DEFAULT_CALIBRATION", "SHIPPED_SETTINGS", "TIERS", "Policy"]


def _sub_tables(section: type) -> dict[str, type]:
    return {f.name: f.metadata["section"] for f in dataclasses.fields(section) if "section" in f.metadata}


def _plain(value: Any) -> Any:
    """A section (or a value of one) as the plain JSON-shaped values a file overlays: dicts and lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return dict(value)
    return value


def _named(section: type, values: dict) -> dict:
    """A section's plain values as ``policy_id`` hashes them: a ``named_when_set`` key left out at its default."""
    out = dict(values)
    for f in dataclasses.fields(section):
        sub = f.metadata.get("section")
        if sub is not None:
            out[f.name] = _named(sub, values[f.name])
        elif f.metadata.get("named_when_set") and values[f.name] == f.default:
            del out[f.name]
    return out


def _typed(section: type, values: dict, **extra: Any) -> Any:
    """The frozen section of checked plain values (lists become tuples)."""
    subs = _sub_tables(section)
    given = {
        f.name: _typed(subs[f.name], values[f.name])
        if f.name in subs
        else (tuple(values[f.name]) if isinstance(values[f.name], list) else values[f.name])
        for f in dataclasses.fields(section)
        if f.name in values
    }
    return section(**given, **extra)


# The calibration the package ships: fitted by bench/fit_default_calibration.py, overlaid on the defaults.
DEFAULT_CALIBRATION = Path(__file__).with_name("default_calibration.toml")
# The tier thresholds fitted with the shipped calibration (default_calibration.toml may set them too).
SHIPPED_SETTINGS = ("high_probability", "mid_probability", "min_answer_confidence")
# The keys of one calibration: a policy takes them all from one place (a file that sets any of them starts from
# no calibration, never from a mix of its own and the shipped one).
CALIBRATION_KEYS = tuple(
    f.name for f in dataclasses.fields(Match) if f.name == "calibration_id" or f.name not in CALIBRATION_SETTINGS
)


@lru_cache(maxsize=1)
def _base_json() -> str:
    values = _plain(Sections())
    if DEFAULT_CALIBRATION.is_file():
        given = tomllib.loads(DEFAULT_CALIBRATION.read_text(encoding="utf-8"))
        allowed = (*CALIBRATION_KEYS, *SHIPPED_SETTINGS)
        unknown = [k for k in given.get("match", {}) if k not in allowed] + [k for k in given if k != "match"]
        if unknown:
            raise ConfigError(str(DEFAULT_CALIBRATION), unknown[0], "not a calibration key")
        _merge(str(DEFAULT_CALIBRATION), "", Sections, values, given)
    return json.dumps(values)


def _base() -> dict:
    """The built-in defaults: the sections', with the shipped calibration."""
    return json.loads(_base_json())


@lru_cache(maxsize=1)
def default_calibration_id() -> str:
    """The shipped calibration's id (read with ``_base_json``, once: every search asks for it)."""
    return _base()["match"]["calibration_id"]


def _upgrade_legacy_match(file: str, given: dict) -> dict:
    """A policy written before answer confidence had signals: ``calibration_slope``/``calibration_intercept`` of
    the best cosine become a one-signal model; the all-zero placeholder of an uncalibrated policy is dropped, so
    the shipped calibration applies."""
    m = given.get("match")
    if not isinstance(m, dict) or not {"calibration_slope", "calibration_intercept"} & m.keys():
        return given
    m = dict(m)
    rule = Rule(NUMBER, -1000.0, 1000.0)
    slope = _check(file, "match.calibration_slope", m.pop("calibration_slope", 0.0), rule)
    intercept = _check(file, "match.calibration_intercept", m.pop("calibration_intercept", 0.0), rule)
    if "features" not in m:
        if m.get("calibration_id") and (slope or intercept):
            m.update(features=["best_cosine"], weights=[slope], intercept=intercept)
        elif not m.get("calibration_id"):
            m.pop("calibration_id", None)
    return {**given, "match": m}


def _check_calibration(source: str, m: dict) -> None:
    unknown = [f for f in m["features"] if f not in SIGNALS]
    if unknown:
        raise ConfigError(source, "match.features", f"{unknown[0]!r} is not a signal (known: {', '.join(SIGNALS)})")
    if len(m["weights"]) != len(m["features"]):
        raise ConfigError(source, "match.weights", f"{len(m['weights'])} weights for {len(m['features'])} features")
    x, y = m["isotonic_x"], m["isotonic_y"]
    if len(x) != len(y) or len(x) == 1:
        raise ConfigError(source, "match.isotonic_x", "isotonic_x and isotonic_y need the same length, 0 or >= 2")
    if any(b <= a for a, b in zip(x, x[1:], strict=False)) or any(b < a for a, b in zip(y, y[1:], strict=False)):
        raise ConfigError(source, "match.isotonic_x", "isotonic_x must rise strictly and isotonic_y must not fall")
    if any(not 0.0 <= v <= 1.0 for v in y):
        raise ConfigError(source, "match.isotonic_y", "probabilities must lie in [0, 1]")
    if not m["mid_probability"] <= m["high_probability"]:
        raise ConfigError(source, "match.mid_probability", "must not exceed match.high_probability")


def _check_across_keys(source: str, values: dict) -> None:
    """The rules that tie one key to another."""
    m = values["match"]
    _check_calibration(source, m)
    if not m["mid_threshold"] <= m["high_threshold"]:
        raise ConfigError(source, "match.mid_threshold", "must not exceed match.high_threshold")
    if not m["low_ceiling"] <= m["mid_ceiling"] <= m["high_ceiling"]:
        raise ConfigError(source, "match", "ceilings must rise: low_ceiling <= mid_ceiling <= high_ceiling")
    r = values["relevance"]
    if r["cosine_ceiling"] <= r["cosine_floor"]:
        raise ConfigError(source, "relevance.cosine_ceiling", "must exceed relevance.cosine_floor")
    unknown = [k for k in values["content_risk"]["exclude"] if k not in KINDS]
    if unknown:
        raise ConfigError(source, "content_risk.exclude", f"{unknown[0]!r} is not a kind (known: {', '.join(KINDS)})")
    if values["ingest"]["target_tokens"] > values["ingest"]["max_tokens"]:
        raise ConfigError(source, "ingest.target_tokens", "must not exceed ingest.max_tokens")


def _check(file: str, key: str, value: Any, rule: Rule) -> Any:
    typ, lo, hi = rule.kind, rule.lo, rule.hi
    if isinstance(typ, list):
        elem = typ[0]
        if not isinstance(value, list) or not all(isinstance(v, elem) and not isinstance(v, bool) for v in value):
            name = "numbers" if elem is NUMBER else elem.__name__
            raise ConfigError(file, key, f"expected a list of {name}, got {value!r}")
        return [float(v) for v in value] if elem is NUMBER else value
    if isinstance(typ, dict):
        ((kt, vt),) = typ.items()
        if not isinstance(value, dict) or not all(isinstance(k, kt) and isinstance(v, vt) for k, v in value.items()):
            raise ConfigError(file, key, f"expected a table of {vt.__name__} values, got {value!r}")
        return value
    if typ is bool:
        if not isinstance(value, bool):
            raise ConfigError(file, key, f"expected true or false, got {type(value).__name__} {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, typ):
        names = " or ".join(t.__name__ for t in (typ if isinstance(typ, tuple) else (typ,)))
        raise ConfigError(file, key, f"expected {names}, got {type(value).__name__} {value!r}")
    if lo is not None and hi is not None and not (lo <= value <= hi):
        raise ConfigError(file, key, f"{value!r} is out of range [{lo}, {hi}]")
    return float(value) if typ is NUMBER else value


def _merge(file: str, prefix: str, section: type, into: dict, given: dict) -> None:
    known = {f.name: f for f in dataclasses.fields(section)}
    for k, v in given.items():
        key = f"{prefix}{k}"
        if k not in known:
            raise ConfigError(file, key, f"unknown key (known: {', '.join(sorted(known))})")
        sub = known[k].metadata.get("section")
        if sub is not None:
            if not isinstance(v, dict):
                raise ConfigError(file, key, f"expected a table, got {type(v).__name__}")
            _merge(file, key + ".", sub, into[k], v)
        else:
            into[k] = _check(file, key, v, known[k].metadata["rule"])


@dataclasses.dataclass(frozen=True, eq=False)
class Policy(Sections):
    """A validated policy: ``policy.freshness.half_life_days`` reads a value (schemas/policy_sections.py)."""

    source: str = dataclasses.field(default="<built-in default>", kw_only=True)

    @cached_property
    def policy_id(self) -> str:
        named = {name: _named(sub, _plain(getattr(self, name))) for name, sub in _sub_tables(Sections).items()}
        canonical = json.dumps(named, sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def to_dict(self) -> dict:
        """The merged policy as plain JSON values (a fresh copy): what ``policy_id`` hashes."""
        return {name: _plain(getattr(self, name)) for name in _sub_tables(Sections)}

    @property
    def calibration_status(self) -> str:
        """default | operator | uncalibrated (schemas/answer_signals.py)."""
        m = self.match
        if not (m.features and m.calibration_id):
            return UNCALIBRATED
        return DEFAULT if m.calibration_id == default_calibration_id() else OPERATOR

    @classmethod
    def _of(cls, values: dict, source: str) -> Policy:
        policy: Policy = _typed(cls, values, source=source)
        return policy

    @classmethod
    def default(cls) -> Policy:
        return cls._of(_base(), "<built-in default>")

    @classmethod
    def without_shipped_calibration(cls) -> Policy:
        """The sections' defaults alone: what bench/fit_default_calibration.py fits the shipped calibration from."""
        return cls(source="<built-in default, no calibration>")

    def calibration_toml(self) -> str:
        """This policy's calibration and tier thresholds as a ``[match]`` table (schemas/default_calibration.toml)."""
        m = self.to_dict()["match"]
        keys = [*CALIBRATION_KEYS, *SHIPPED_SETTINGS]
        return "[match]\n" + "".join(f"{k} = {_toml_value(m[k])}\n" for k in keys)

    @classmethod
    def from_dict(cls, given: dict, source: str = "<dict>") -> Policy:
        values = _base()
        given = _upgrade_legacy_match(source, given)
        given_match = given.get("match")
        if isinstance(given_match, dict) and any(k in given_match for k in CALIBRATION_KEYS):
            uncalibrated = _plain(Match())
            values["match"].update({k: uncalibrated[k] for k in CALIBRATION_KEYS})
        _merge(source, "", Sections, values, given)
        _check_across_keys(source, values)
        return cls._of(values, source)

    @classmethod
    def load(cls, path: str | Path | None) -> Policy:
        if path is None:
            return cls.default()
        p = Path(path)
        if not p.is_file():
            raise ConfigError(str(p), None, "policy file not found")
        try:
            given = tomllib.loads(p.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ConfigError(str(p), None, f"not valid TOML: {e}") from None
        return cls.from_dict(given, str(p))

    def to_toml(self) -> str:
        """The policy as TOML (what ``trustindex policy --show`` prints)."""
        lines: list[str] = [f"# policy_id = {self.policy_id}"]

        def emit(prefix: str, table: dict, section: type) -> None:
            subs = _sub_tables(section)
            if prefix:
                lines.append(f"\n[{prefix}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items() if k not in subs)
            for k, sub in subs.items():
                emit(f"{prefix}.{k}" if prefix else k, table[k], sub)

        emit("", self.to_dict(), Sections)
        return "\n".join(lines) + "\n"


def _toml_value(v: Any) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)
