"""The response JSON Schema (schemas/response.schema.json) and a validator."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("response.schema.json")


@lru_cache(maxsize=1)
def response_schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def validate_response(obj: dict) -> None:
    """Raise jsonschema.ValidationError when ``obj`` breaks the contract."""
    import jsonschema

    jsonschema.validate(obj, response_schema(), cls=jsonschema.Draft202012Validator)
