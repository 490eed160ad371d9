"""The transports over the search library (``trustindex.query``): the HTTP app of ``trustindex serve``, the MCP
server (stdio and streamable HTTP), the workers, metrics and OpenAPI, and the live snapshot both follow.

Needs the ``[serve]`` extra (starlette, uvicorn, mcp, prometheus-client, orjson); ``query/`` imports nothing of it.
"""
