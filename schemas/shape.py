"""One JSON codec for the response's typed parts (schemas/hit_parts.py, schemas/hit_factors.py): a dataclass's fields,
in order, are its JSON keys, so ``to_json`` and ``from_json`` are derived from the type and never written by hand.

A field whose key a response may leave out is declared ``optional()``: omitted when its value is None.  Where a key
may also be present holding null (an attribution's ``last_author``), the type keeps ``absent`` instead, the keys its
JSON leaves out (and only those are omitted), so a parsed part writes back exactly what it read.  A key the type
does not declare is an error naming the type and the key: a response part grows its type first, then its builder.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Self

_OPTIONAL = "optional"
ABSENT_FIELD = "absent"


def optional(default: Any = None) -> Any:
    """A field whose key the JSON leaves out when the value is None (or when the part's ``absent`` names it)."""
    return dataclasses.field(default=default, metadata={_OPTIONAL: True})


def absent_keys() -> Any:
    """The keys a part's JSON leaves out (for parts whose optional keys may also hold null): ``from_json`` fills
    it; a part built in code names them."""
    return dataclasses.field(default=frozenset(), repr=False, compare=False)


@dataclasses.dataclass(frozen=True, slots=True)
class _Key:
    name: str
    optional: bool
    decode: Callable[[Any], Any]


class Shape:
    """A response part: ``to_json`` and ``from_json`` from its dataclass fields (see the module's docstring)."""

    __slots__ = ()

    def to_json(self) -> dict:
        absent = getattr(self, ABSENT_FIELD, None)
        out = {}
        for k in _keys(type(self)):
            v = getattr(self, k.name)
            if k.optional and (k.name in absent if absent is not None else v is None):
                continue
            out[k.name] = _encode(v)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Self:
        return _parse(cls, obj, _keys(cls))


def parse(hint: Any, obj: Any) -> Any:
    """``obj`` read as the type ``hint`` names: a part, a generic part (``Factor[VersionEvidence]``), a tuple or a
    dict of parts."""
    return _decoder(hint)(obj)


def _parse(cls: Any, obj: Mapping[str, Any], keys: tuple[_Key, ...]) -> Any:
    """``obj`` read into part type ``cls`` by its ``keys``."""
    values = {k.name: k.decode(obj[k.name]) for k in keys if k.name in obj}
    if len(values) != len(obj):
        unknown = [k for k in obj if k not in values]
        raise ValueError(f"{cls.__name__}: the response part has keys its type does not declare: {unknown}")
    missing = [k.name for k in keys if k.name not in obj and not k.optional]
    if missing:
        raise ValueError(f"{cls.__name__}: the response part lacks its keys {missing}")
    if ABSENT_FIELD in cls.__dataclass_fields__:
        values[ABSENT_FIELD] = frozenset(k.name for k in keys if k.optional and k.name not in obj)
    return cls(**values)


def _encode(v: Any) -> Any:
    if isinstance(v, Shape):
        return v.to_json()
    if isinstance(v, tuple | list):
        return [_encode(x) for x in v]
    if type(v) is dict:
        return {k: _encode(x) for k, x in v.items()}
    return v


_KEYS: dict[Any, tuple[_Key, ...]] = {}


def _keys(cls: type, args: tuple = ()) -> tuple[_Key, ...]:
    """A part type's keys, worked out from its fields and their types once; ``args``: a generic part's type
    arguments (``Factor[AttributionEvidence]``), put in place of its type variables."""
    keys = _KEYS.get((cls, args))
    if keys is None:
        hints = typing.get_type_hints(cls)
        given = dict(zip(getattr(cls, "__parameters__", ()), args, strict=False))
        keys = _KEYS[(cls, args)] = tuple(
            _Key(f.name, bool(f.metadata.get(_OPTIONAL)), _decoder(given.get(hints[f.name], hints[f.name])))
            for f in dataclasses.fields(cls)
            if f.name != ABSENT_FIELD
        )
    return keys


def _decoder(hint: Any) -> Callable[[Any], Any]:
    """How a field's JSON value becomes its typed value: a part is parsed, a tuple of parts each, a dict of parts
    each value; any other value is kept as the JSON holds it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if isinstance(hint, type) and issubclass(hint, Shape):
        return hint.from_json
    if isinstance(origin, type) and issubclass(origin, Shape):  # a generic part: its fields by its arguments
        keys = _keys(origin, args)
        return lambda v: _parse(origin, v, keys)
    if origin in (types.UnionType, typing.Union):
        inner = [_decoder(a) for a in args if a is not type(None)]
        if len(inner) == 1:
            one = inner[0]
            return lambda v: None if v is None else one(v)
        return _as_is
    if origin is tuple and args and args[-1] is Ellipsis:
        item = _decoder(args[0])
        return lambda v: tuple(item(x) for x in v)
    if origin is list and args and (item := _decoder(args[0])) is not _as_is:
        return lambda v: [item(x) for x in v]
    if origin is dict and len(args) == 2:
        value = _decoder(args[1])
        if value is not _as_is:
            return lambda v: {k: value(x) for k, x in v.items()}
    return _as_is


def _as_is(v: Any) -> Any:
    return v
