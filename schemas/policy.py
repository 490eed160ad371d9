"""The scoring policy: every number of the trust formula, validated on load.

The policy is read at query time, so editing ``policy.toml`` changes scores with
no rebuild.  A response names the policy by ``policy_id``: the sha256 of the
canonical JSON of the merged policy (defaults overlaid with the file).
Build-time keys (ingest limits, allowlists, publish safety) live here too so
that one file holds every number.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from trustindex.schemas.answer_signals import DEFAULT, OPERATOR, SIGNALS, UNCALIBRATED
from trustindex.schemas.content_risk import AGENT_INSTRUCTION, CREDENTIAL_PHISHING, HIDDEN_TEXT, KINDS
from trustindex.schemas.errors import ConfigError
from trustindex.schemas.page_kinds import AGENT_INSTRUCTIONS, PAGE_KINDS

TIERS = ("foundation", "partner", "third_party", "community", "unknown")

# Measured on the real docs' judged queries (bench/bench_retrieval.py, docs/benchmarks.md); every other kind 1.0.
PAGE_KIND_DEFAULTS = {AGENT_INSTRUCTIONS: 0.5}

# (default, type, min, max); nested dicts are sections.  Lists are typed by element.
_NUM = (int, float)
SPEC: dict[str, Any] = {
    "attribution": {
        "tiers": {t: (d, _NUM, 0.0, 2.0) for t, d in zip(TIERS, (1.0, 0.9, 0.75, 0.65, 0.45), strict=True)},
    },
    "verification": {
        "unverified": (0.9, _NUM, 0.0, 2.0),
        "stale": (0.9, _NUM, 0.0, 2.0),
        "tiers": {t: (d, _NUM, 0.0, 2.0) for t, d in zip(TIERS, (1.0, 0.98, 0.95, 0.93, 0.9), strict=True)},
        "methods": (["trailer", "merge", "signature", "ledger"], [str], None, None),
        # true: claimed links (unsigned trailers and merges) give no boost; only authenticated and ledger links do
        "require_authenticated": (False, bool, None, None),
    },
    "freshness": {
        "half_life_days": (365.0, _NUM, 1.0, 36500.0),
        "floor": (0.6, _NUM, 0.0, 1.0),
        "bulk_min_files": (10, int, 1, 1_000_000),
        "bulk_share": (0.3, _NUM, 0.0, 1.0),
    },
    "deprecation": {
        "multiplier": (0.35, _NUM, 0.0, 1.0),
        # A page of a legacy docs version (Docusaurus: older than lastVersion) with no docs target in the query;
        # a query naming a docs version lifts it (legacy pages then compete as that version).
        "legacy_docs_multiplier": (0.5, _NUM, 0.0, 1.0),
        # A page in a released version's folder (``*versioned_docs/version-X/``) that no docs config labels: a
        # frozen copy of an earlier release whose standing is unknown, so a milder doubt than legacy; lifted like
        # legacy by a docs target.  Real docs, dev half: 0.9 ranked files better (docs/benchmarks.md).
        "version_folder_multiplier": (0.9, _NUM, 0.0, 1.0),
        "path_patterns": (["**/*-deprecated/**", "**/deprecated/**"], [str], None, None),
    },
    "version": {
        "satisfies": (1.1, _NUM, 0.0, 2.0),
        "unknown": (1.0, _NUM, 0.0, 2.0),
        "silent": (1.0, _NUM, 0.0, 2.0),
        "patch_step": (0.05, _NUM, 0.0, 1.0),
        "minor_step": (0.2, _NUM, 0.0, 1.0),
        "near_miss_floor": (0.5, _NUM, 0.0, 1.0),
        "npm_allowlist": (["@midnight-ntwrk/*", "@midnightntwrk/*"], [str], None, None),
        "cargo_allowlist": (["midnight-*"], [str], None, None),
        "front_matter_fields": (
            {"language_version": "compact-language", "compiler_version": "compact-compiler"},
            {str: str},
            None,
            None,
        ),
    },
    # A passage flagged by the content-risk rules (schemas/content_risk_rules.toml) takes its kinds' multipliers;
    # a kind named in `exclude` keeps its passages out of every answer.
    "content_risk": {
        AGENT_INSTRUCTION: (0.3, _NUM, 0.0, 1.0),
        # the characters are removed from what is served and embedded: what is left is a smaller doubt
        HIDDEN_TEXT: (0.85, _NUM, 0.0, 1.0),
        CREDENTIAL_PHISHING: (0.1, _NUM, 0.0, 1.0),
        "exclude": ([], [str], None, None),
    },
    # What a page is (schemas/page_kinds.py; read from paths, front matter and the site config at build time): each
    # kind's trust multiplier.  Content written to steer AI agents (AGENTS.md, CLAUDE.md, skills, plugin prompts)
    # yields to the reference written for people unless the operator raises it; "unknown" is a snapshot built
    # before pages had a kind.  Drafts also take fusion.unpublished_multiplier on their order key.
    "page_kind": {k: (PAGE_KIND_DEFAULTS.get(k, 1.0), _NUM, 0.0, 2.0) for k in PAGE_KINDS},
    "confidence": {
        "trust_weight": (1.0, _NUM, 0.0, 10.0),
        "relevance_weight": (1.0, _NUM, 0.0, 10.0),
    },
    "relevance": {
        # Raw cosine maps linearly from cosine_floor (0) to cosine_ceiling (1).
        "cosine_floor": (0.25, _NUM, -1.0, 1.0),
        "cosine_ceiling": (0.75, _NUM, -1.0, 1.0),
        # BM25 saturates as s / (s + bm25_half): a score of bm25_half gives 0.5.
        "bm25_half": (8.0, _NUM, 0.001, 1000.0),
        # Lexical above dense: on the real-docs judged set (bench/bench_retrieval.py, dev half) 0.3/0.7 ranked
        # files better than 0.7/0.3 (nDCG@10 +0.020 dev, +0.033 test; docs/benchmarks.md).
        "dense_weight": (0.3, _NUM, 0.0, 1.0),
        "lexical_weight": (0.7, _NUM, 0.0, 1.0),
        # Field-aware lexical scoring: BM25 over title, headings and file name, added at this weight to the
        # passage's BM25 (query/lexical_signals.py); 0 searches the passage text alone.
        "field_weight": (0.0, _NUM, 0.0, 10.0),
        # The query's identifiers (CamelCase, snake_case, error codes) as their own share of relevance.  Real docs,
        # dev half (244 queries): 0.2 ranked files better than 0 (nDCG@10 0.8311 -> 0.8381 dev, 0.8175 -> 0.8227
        # test; 0.1 / 0.3 / 0.4 / 0.5: 0.8339 / 0.8379 / 0.8359 / 0.8350 dev).
        "identifier_weight": (0.2, _NUM, 0.0, 1.0),
    },
    "fusion": {
        "rrf_k": (60, int, 1, 10_000),
        "dense_weight": (1.0, _NUM, 0.0, 10.0),
        "lexical_weight": (1.0, _NUM, 0.0, 10.0),
        "identifier_weight": (1.0, _NUM, 0.0, 10.0),
        # Passage -> page aggregation (query/pages.py): a passage's order key gains page_weight x the keys of
        # its page's next page_passages best candidates; 0 orders passages alone.
        "page_weight": (0.3, _NUM, 0.0, 10.0),
        "page_passages": (1, int, 0, 100),
        # Page-level dense channel (query/pages.py with_page_vector): the order key gains page_vector_weight x the
        # dense relevance of the query to the page's mean passage vector; 0 leaves it out.  Real docs, dev half: 0.1
        # ranked files best (nDCG@10 +0.010 dev, +0.005 test; docs/benchmarks.md).
        "page_vector_weight": (0.1, _NUM, 0.0, 10.0),
        # Page-level lexical channel (query/pages.py page_term_coverage): the order key gains page_terms_weight x
        # the idf-weighted share of the query's terms found anywhere in the page; 0 leaves it out.  Real docs, dev
        # half: 0.075 ranked files best (nDCG@10 +0.002 dev, +0.009 test; docs/benchmarks.md).
        "page_terms_weight": (0.075, _NUM, 0.0, 10.0),
        # A passage of a page the docs site does not serve (a file or folder name starting with "_": Docusaurus's
        # partials, drafts and hidden sections; query/unpublished.py) has its order key scaled by this; 1 leaves
        # it alone.  Real docs, dev half: 0.94 ranked files better than 1 (nDCG@10 0.8757 -> 0.8803, +17/-3
        # queries; 0.92 / 0.96: 0.8786 / 0.8784).
        "unpublished_multiplier": (0.94, _NUM, 0.0, 1.0),
        "candidate_depth": (100, int, 1, 100_000),
        # Per-page cap on each channel's candidates (query/fusion.py per_page_capped): a page gives a channel at
        # most this many passages before the channel is cut to candidate_depth, so one long page cannot fill the
        # pool; 0 leaves the channels uncapped.  Real docs (files a response names, also_in included): 2 ranked
        # files better than 0 (nDCG@10 0.8727 -> 0.8757 dev, +15/-5 queries; 0.8471 -> 0.8483 test; caps 1 / 3 /
        # 5 / 10: 0.8433 / 0.8741 / 0.8740 / 0.8730 dev, channels read 4x deep).
        "max_passages_per_page": (2, int, 0, 100_000),
    },
    "match": {
        # Calibrated (the policy has a model): the tier follows answer_confidence, high from high_probability, mid
        # from mid_probability, else low; below min_answer_confidence the response abstains (low_confidence).
        # high: the top hit answers at least 4 times in 5 (warehouse/calibrate.py HIGH_TIER_FLOOR)
        "high_probability": (0.8, _NUM, 0.0, 1.0),
        "mid_probability": (0.25, _NUM, 0.0, 1.0),
        "min_answer_confidence": (0.1, _NUM, 0.0, 1.0),
        # Uncalibrated (features = []): the tier follows the best cosine, as before answer confidence existed.
        "high_threshold": (0.55, _NUM, -1.0, 1.0),
        "mid_threshold": (0.4, _NUM, -1.0, 1.0),
        "high_ceiling": (0.95, _NUM, 0.0, 1.0),
        "mid_ceiling": (0.75, _NUM, 0.0, 1.0),
        "low_ceiling": (0.35, _NUM, 0.0, 1.0),
        "evidence_floor": (0.12, _NUM, 0.0, 1.0),
        # The calibration (CALIBRATION_KEYS), fitted by `trustindex calibrate` or shipped in
        # default_calibration.toml: answer_confidence = sigmoid(intercept + Σ weights × features), then the
        # isotonic map (isotonic_x → isotonic_y, linear between breakpoints) when it has breakpoints.
        "calibration_id": ("", str, None, None),
        "features": ([], [str], None, None),
        "weights": ([], [_NUM], None, None),
        "intercept": (0.0, _NUM, -1000.0, 1000.0),
        "isotonic_x": ([], [_NUM], None, None),
        "isotonic_y": ([], [_NUM], None, None),
        # How the calibration did on queries it was not fitted on (the reliability diagram of the HTML report):
        # ECE over 10 equal-width bins, Brier score, AUROC, the number of queries, and per non-empty bin the mean
        # predicted probability, the observed share of relevant top hits and the count.
        "heldout_n": (0, int, 0, 1 << 31),
        "heldout_ece": (0.0, _NUM, 0.0, 1.0),
        "heldout_brier": (0.0, _NUM, 0.0, 1.0),
        "heldout_auroc": (0.0, _NUM, 0.0, 1.0),
        "reliability_predicted": ([], [_NUM], None, None),
        "reliability_observed": ([], [_NUM], None, None),
        "reliability_count": ([], [int], None, None),
    },
    "rerank": {
        "model_path": ("", str, None, None),
        "depth": (30, int, 1, 1000),
    },
    "ingest": {
        "max_file_bytes": (2_000_000, int, 1, 1 << 34),
        "target_tokens": (200, int, 16, 512),
        "max_tokens": (256, int, 16, 512),
    },
    "publish": {
        "max_chunk_loss": (0.5, _NUM, 0.0, 1.0),
        "max_document_loss": (0.5, _NUM, 0.0, 1.0),
        "retention": (5, int, 1, 10_000),
    },
    "dense": {
        # Exact up to 1.5M passages: with the int8 prefilter a warm 1M search is exact at p99 89 ms and 1.8 GB peak,
        # where HNSW (efSearch 2048) gave p99 86 ms, 1.9 GB and recall@10 0.92 after a 2,000 s build (query/dense.py).
        "exact_below": (1_500_000, int, 0, 1 << 40),
    },
}


# [match] keys that are the operator's choices, not fitted numbers.
_CALIBRATION_SETTINGS = (
    "high_probability",
    "mid_probability",
    "min_answer_confidence",
    "high_threshold",
    "mid_threshold",
    "high_ceiling",
    "mid_ceiling",
    "low_ceiling",
    "evidence_floor",
)


def _defaults(spec: dict) -> dict:
    return {k: _defaults(v) if isinstance(v, dict) else copy.deepcopy(v[0]) for k, v in spec.items()}


# The calibration the package ships: fitted by bench/fit_default_calibration.py, overlaid on SPEC's defaults.
DEFAULT_CALIBRATION = Path(__file__).with_name("default_calibration.toml")
# The tier thresholds fitted with the shipped calibration (default_calibration.toml may set them too).
SHIPPED_SETTINGS = ("high_probability", "mid_probability", "min_answer_confidence")
# The keys of one calibration: a policy takes them all from one place (a file that sets any of them starts from
# no calibration, never from a mix of its own and the shipped one).
CALIBRATION_KEYS = tuple(k for k in SPEC["match"] if k == "calibration_id" or k not in _CALIBRATION_SETTINGS)


@lru_cache(maxsize=1)
def _base_json() -> str:
    values = _defaults(SPEC)
    if DEFAULT_CALIBRATION.is_file():
        given = tomllib.loads(DEFAULT_CALIBRATION.read_text(encoding="utf-8"))
        allowed = (*CALIBRATION_KEYS, *SHIPPED_SETTINGS)
        unknown = [k for k in given.get("match", {}) if k not in allowed] + [k for k in given if k != "match"]
        if unknown:
            raise ConfigError(str(DEFAULT_CALIBRATION), unknown[0], "not a calibration key")
        _merge(str(DEFAULT_CALIBRATION), "", SPEC, values, given)
    return json.dumps(values)


def _base() -> dict:
    """The built-in defaults: SPEC's, with the shipped calibration."""
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
    rule = (0.0, _NUM, -1000.0, 1000.0)
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


def _check(file: str, key: str, value: Any, rule: tuple) -> Any:
    _default, typ, lo, hi = rule
    if isinstance(typ, list):
        elem = typ[0]
        if not isinstance(value, list) or not all(isinstance(v, elem) and not isinstance(v, bool) for v in value):
            name = "numbers" if elem is _NUM else elem.__name__
            raise ConfigError(file, key, f"expected a list of {name}, got {value!r}")
        return [float(v) for v in value] if elem is _NUM else value
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
    if lo is not None and not (lo <= value <= hi):
        raise ConfigError(file, key, f"{value!r} is out of range [{lo}, {hi}]")
    return float(value) if typ is _NUM else value


def _merge(file: str, prefix: str, spec: dict, into: dict, given: dict) -> None:
    for k, v in given.items():
        key = f"{prefix}{k}"
        if k not in spec:
            raise ConfigError(file, key, f"unknown key (known: {', '.join(sorted(spec))})")
        if isinstance(spec[k], dict):
            if not isinstance(v, dict):
                raise ConfigError(file, key, f"expected a table, got {type(v).__name__}")
            _merge(file, key + ".", spec[k], into[k], v)
        else:
            into[k] = _check(file, key, v, spec[k])


class Policy:
    """A validated policy; ``policy[section][key]`` reads a value."""

    def __init__(self, values: dict, source: str = "<built-in default>"):
        self.values = values
        self.source = source
        canonical = json.dumps(values, sort_keys=True, separators=(",", ":"))
        self.policy_id = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def __getitem__(self, section: str) -> dict:
        return self.values[section]

    @property
    def calibration_status(self) -> str:
        """default | operator | uncalibrated (schemas/answer_signals.py)."""
        m = self.values["match"]
        if not (m["features"] and m["calibration_id"]):
            return UNCALIBRATED
        return DEFAULT if m["calibration_id"] == default_calibration_id() else OPERATOR

    @classmethod
    def default(cls) -> Policy:
        return cls(_base())

    @classmethod
    def without_shipped_calibration(cls) -> Policy:
        """SPEC's defaults alone: what bench/fit_default_calibration.py fits the shipped calibration from."""
        return cls(_defaults(SPEC), "<built-in default, no calibration>")

    def calibration_toml(self) -> str:
        """This policy's calibration and tier thresholds as a ``[match]`` table (schemas/default_calibration.toml)."""
        m = self.values["match"]
        keys = [*CALIBRATION_KEYS, *SHIPPED_SETTINGS]
        return "[match]\n" + "".join(f"{k} = {_toml_value(m[k])}\n" for k in keys)

    @classmethod
    def from_dict(cls, given: dict, source: str = "<dict>") -> Policy:
        values = _base()
        given = _upgrade_legacy_match(source, given)
        given_match = given.get("match")
        if isinstance(given_match, dict) and any(k in given_match for k in CALIBRATION_KEYS):
            uncalibrated = _defaults(SPEC["match"])
            values["match"].update({k: uncalibrated[k] for k in CALIBRATION_KEYS})
        _merge(source, "", SPEC, values, given)
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
            raise ConfigError(
                source, "content_risk.exclude", f"{unknown[0]!r} is not a kind (known: {', '.join(KINDS)})"
            )
        if values["ingest"]["target_tokens"] > values["ingest"]["max_tokens"]:
            raise ConfigError(source, "ingest.target_tokens", "must not exceed ingest.max_tokens")
        return cls(values, source)

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

        def emit(prefix: str, table: dict) -> None:
            scalars = {k: v for k, v in table.items() if not isinstance(v, dict) or _is_leaf_map(prefix, k)}
            if prefix:
                lines.append(f"\n[{prefix}]")
            for k, v in scalars.items():
                lines.append(f"{k} = {_toml_value(v)}")
            for k, v in table.items():
                if isinstance(v, dict) and k not in scalars:
                    emit(f"{prefix}.{k}" if prefix else k, v)

        emit("", self.values)
        return "\n".join(lines) + "\n"


def _is_leaf_map(prefix: str, key: str) -> bool:
    section = SPEC
    for part in filter(None, prefix.split(".")):
        section = section[part]
    return not isinstance(section.get(key), dict)


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
