"""The serving module: ``from trustindex.query import Index``.

Imports nothing from the build side (flows, extractors, prefect)."""

from __future__ import annotations


def __getattr__(name):
    if name == "Index":
        from trustindex.query.index import Index

        return Index
    raise AttributeError(name)


__all__ = ["Index"]
