"""The OpenAPI 3.1 description of ``trustindex serve`` (served at ``/openapi.json``).

The search response's schema is the contract's JSON Schema itself (schemas/response.schema.json, 2020-12, which
OpenAPI 3.1 takes as is), so the description cannot drift from what a search returns.
"""

from __future__ import annotations

from typing import Any

from trustindex.schemas.response import response_schema

_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string", "description": "the one-line message of the CLI"}},
}


def _json(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def openapi_document(limits: Any) -> dict:
    errors = {
        "400": _json(_ERROR_REF, "bad request"),
        "413": _json(_ERROR_REF, "body too large"),
        "503": _json(_ERROR_REF, "no snapshot loaded, or server busy"),
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "trustindex", "version": "1"},
        "paths": {**_search_paths(limits, errors), **_reading_paths(errors)},
        "components": {
            "schemas": {
                "SearchResponse": response_schema(),
                "Error": _ERROR,
                "LineError": {
                    "type": "object",
                    "required": ["line", "error"],
                    "properties": {"line": {"type": "integer"}, "error": {"type": "string"}},
                },
            },
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a token of --token-file or --tokens, or a JWT of --oidc-issuer; every answer "
                    "holds only the sources the token may read (docs/serving.md, Access)",
                }
            },
        },
    }


_SEARCH_RESPONSE = {"$ref": "#/components/schemas/SearchResponse"}
_ERROR_REF = {"$ref": "#/components/schemas/Error"}
_PLAIN = {"type": "object"}


def _requests(limits: Any) -> tuple[dict, dict]:
    """One search request as the batch takes it, and as /v1/search takes it (with its output format)."""
    properties: dict[str, Any] = {
        "query": {"type": "string", "minLength": 1, "maxLength": 10_000},
        "k": {"type": "integer", "minimum": 1, "maximum": limits.max_k, "default": 10},
        "targets": {
            "oneOf": [
                {"type": "object", "additionalProperties": {"type": "string"}},
                {"type": "array", "items": {"type": "string", "pattern": "="}},
            ],
            "description": "{component: version or range}, or COMPONENT=VERSION strings",
        },
        "strict": {"type": "boolean", "default": False},
        "also": {"type": "array", "items": {"type": "string"}, "description": "other phrasings of the query"},
    }
    request = {"type": "object", "required": ["query"], "additionalProperties": False, "properties": properties}
    search_request = {
        **request,
        "properties": {
            **properties,
            "format": {
                "enum": ["json", "compact"],
                "default": "json",
                "description": "json: the response contract; compact: text for an assistant (text/plain)",
            },
            "max_tokens": {"type": "integer", "minimum": 1, "description": "compact only: whole hits within it"},
        },
    }
    return request, search_request


def _search_paths(limits: Any, errors: dict) -> dict:
    request, search_request = _requests(limits)
    batch = {
        "type": "object",
        "required": ["requests"],
        "properties": {"requests": {"type": "array", "maxItems": limits.max_batch, "items": request}},
        "description": f"at most {limits.max_batch_hits} hits in all (the sum of the requests' k, 10 when unset); "
        f"once the answers pass {limits.max_response_bytes} bytes of JSON, the requests left answer a LineError, "
        "unrun",
    }
    answers = {
        "type": "object",
        "properties": {
            "responses": {
                "type": "array",
                "items": {"oneOf": [_SEARCH_RESPONSE, {"$ref": "#/components/schemas/LineError"}]},
            },
            "warning": {"type": "string", "description": "the server's: a stale or superseded snapshot answered"},
        },
    }
    ok = {"application/json": {"schema": _SEARCH_RESPONSE}, "text/plain": {"schema": {"type": "string"}}}
    return {
        "/v1/search": {
            "post": {
                "operationId": "search",
                "requestBody": {"required": True, "content": {"application/json": {"schema": search_request}}},
                "responses": {"200": {"description": "ok", "content": ok}, **errors},
            }
        },
        "/v1/search:batch": {
            "post": {
                "operationId": "searchBatch",
                "requestBody": {"required": True, "content": {"application/json": {"schema": batch}}},
                "responses": {"200": _json(answers), **errors},
            }
        },
    }


def _reading_paths(errors: dict) -> dict:
    neighbours = {"name": "neighbours", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 1}}
    chunk_id = {"name": "chunk_id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "/v1/passages/{chunk_id}": {
            "get": {
                "operationId": "getPassage",
                "parameters": [chunk_id, neighbours],
                "responses": {"200": _json(_PLAIN), "404": _json(_ERROR_REF, "no such chunk"), **errors},
            }
        },
        **{
            f"/v1/{name}": {"get": {"operationId": name, "responses": {"200": _json(_PLAIN), "503": errors["503"]}}}
            for name in ("sources", "versions", "snapshot")
        },
        "/healthz": {"get": {"operationId": "healthz", "responses": {"200": _json(_PLAIN)}}},
        "/readyz": {"get": {"operationId": "readyz", "responses": {"200": _json(_PLAIN), "503": errors["503"]}}},
        "/metrics": {
            "get": {
                "operationId": "metrics",
                "responses": {"200": {"description": "Prometheus text format", "content": {"text/plain": {}}}},
            }
        },
    }
