"""Content risk: the kinds of finding and the rules that find them (content_risk_rules.toml), validated on load.

The rules are data so that a person can read, test and extend them without touching the matcher
(``extractors/content_risk.py``).  A bad rules file is a ConfigError naming the file, the rule and the problem.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from trustindex.schemas.errors import ConfigError

AGENT_INSTRUCTION = "agent_instruction"
HIDDEN_TEXT = "hidden_text"
CREDENTIAL_PHISHING = "credential_phishing"
KINDS = (AGENT_INSTRUCTION, HIDDEN_TEXT, CREDENTIAL_PHISHING)

# What a compact answer says of each kind (the finding's own reason stays in the row and the full contract).
WARNINGS = {
    AGENT_INSTRUCTION: "warning: addresses instructions to an AI assistant",
    HIDDEN_TEXT: "warning: hides text from a human reader",
    CREDENTIAL_PHISHING: "warning: phishing: asks the reader for a secret, or a link goes elsewhere than it shows",
}

RULES_FILE = Path(__file__).with_name("content_risk_rules.toml")

_FIELDS = {
    "id",
    "kind",
    "reason",
    "pattern",
    "body_min_words",
    "unless_before",
    "unless_sentence",
    "requires",
    "neutralise",
}
_TERM = re.compile(r"<<(\w+)>>")


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    reason: str
    pattern: re.Pattern[str]
    body_min_words: int = 0
    unless_before: re.Pattern[str] | None = None
    unless_sentence: re.Pattern[str] | None = None
    requires: re.Pattern[str] | None = None
    neutralise: bool = False


def _compile(file: str, key: str, text: object, terms: dict[str, str]) -> re.Pattern[str]:
    if not isinstance(text, str) or not text:
        raise ConfigError(file, key, f"expected a regular expression, got {text!r}")

    def term(m: re.Match[str]) -> str:
        if m.group(1) not in terms:
            raise ConfigError(file, key, f"unknown term <<{m.group(1)}>> (known: {', '.join(sorted(terms))})")
        return terms[m.group(1)]

    try:
        return re.compile(_TERM.sub(term, text), re.IGNORECASE)
    except re.error as e:
        raise ConfigError(file, key, f"not a valid regular expression: {e}") from None


def parse_rules(text: str, file: str = "<rules>") -> tuple[Rule, ...]:
    try:
        given = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(file, None, f"not valid TOML: {e}") from None
    terms = given.get("terms", {})
    if not isinstance(terms, dict) or not all(isinstance(v, str) for v in terms.values()):
        raise ConfigError(file, "terms", "expected a table of regular expressions")
    # a term may use the terms defined before it
    resolved: dict[str, str] = {}
    for name, value in terms.items():
        resolved[name] = _TERM.sub(lambda m: resolved.get(m.group(1), m.group(0)), value)
    rules: list[Rule] = []
    seen: set[str] = set()
    for n, r in enumerate(given.get("rule", [])):
        where = f"rule[{n}]" + (f" ({r['id']})" if isinstance(r, dict) and "id" in r else "")
        if not isinstance(r, dict):
            raise ConfigError(file, where, "expected a table")
        unknown = sorted(set(r) - _FIELDS)
        if unknown:
            raise ConfigError(file, f"{where}.{unknown[0]}", f"unknown field (known: {', '.join(sorted(_FIELDS))})")
        for field in ("id", "kind", "reason", "pattern"):
            if not isinstance(r.get(field), str) or not r[field]:
                raise ConfigError(file, f"{where}.{field}", "missing or empty")
        if r["kind"] not in KINDS:
            raise ConfigError(file, f"{where}.kind", f"{r['kind']!r} is not a kind (known: {', '.join(KINDS)})")
        if r["id"] in seen:
            raise ConfigError(file, f"{where}.id", "repeats another rule's id")
        seen.add(r["id"])
        words = r.get("body_min_words", 0)
        if not isinstance(words, int) or isinstance(words, bool) or words < 0:
            raise ConfigError(file, f"{where}.body_min_words", f"expected a whole number >= 0, got {words!r}")
        pattern = _compile(file, f"{where}.pattern", r["pattern"], resolved)
        if words and "body" not in pattern.groupindex:
            raise ConfigError(file, f"{where}.body_min_words", "the pattern has no (?P<body>...) group to count")
        rules.append(
            Rule(
                id=r["id"],
                kind=r["kind"],
                reason=r["reason"],
                pattern=pattern,
                body_min_words=words,
                unless_before=_optional(file, where, r, "unless_before", resolved),
                unless_sentence=_optional(file, where, r, "unless_sentence", resolved),
                requires=_optional(file, where, r, "requires", resolved),
                neutralise=bool(r.get("neutralise", False)),
            )
        )
    if not rules:
        raise ConfigError(file, "rule", "no [[rule]] defined")
    return tuple(rules)


def _optional(file: str, where: str, r: dict, field: str, terms: dict[str, str]) -> re.Pattern[str] | None:
    return _compile(file, f"{where}.{field}", r[field], terms) if field in r else None


def load_rules(path: str | Path | None = None) -> tuple[Rule, ...]:
    """The rules of ``path`` (default: the rules shipped beside this module)."""
    p = Path(path) if path is not None else RULES_FILE
    if not p.is_file():
        raise ConfigError(str(p), None, "content-risk rules file not found")
    return parse_rules(p.read_text(encoding="utf-8"), str(p))


@lru_cache(maxsize=1)
def default_rules() -> tuple[Rule, ...]:
    return load_rules()
