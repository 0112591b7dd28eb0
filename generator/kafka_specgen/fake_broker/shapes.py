"""Reading requests and building responses whatever the spec release's field names.

The broker serves each Kafka release with that release's generated package, and field names
changed between releases (Fetch's ``partitions`` were ``partition_responses`` in 2.7-2.8,
its ``max_wait_ms`` was ``max_wait`` before 2.7, ...). Handlers are written with the newest
names; each API declares its older names in a ``Names`` table, and:

- ``view(request, Protocol, names)`` gives the request as the handler's ``Protocol`` types
  it: the object itself where its classes have every name (the newest releases), else a
  read-only view that maps the names;
- ``build(cls, names, values)`` makes a response object from values under the newest names,
  and refuses a name that neither the class nor the table knows (a rename the table misses
  fails loudly instead of leaving a field empty);
- ``fit`` resets, before encoding, every field the version being answered lacks: the
  package's encoder refuses a non-default value there, rightly, since a client would never
  see it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..library import GeneratedPackage


@dataclass(frozen=True, eq=False)
class Names:
    """The older names of an API's fields, and what reads as a field a release lacks.

    ``renamed``: newest name -> the names it had before (any struct of the API's request
    and response). ``absent``: newest name -> the value a handler reads where a release's
    class has no such field at all (e.g. topic ids before 2.8); ``build`` leaves these out
    where the class lacks them.
    """

    renamed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    absent: Mapping[str, Any] = field(default_factory=dict)


PLAIN = Names()
"""No renames: every release has the newest names."""

_Fitting = tuple[
    tuple[tuple[str, Any], ...], tuple[tuple[str, Any], ...], tuple[tuple[str, bool, Any], ...]
]

_MISSING = object()


class Shapes:
    """The field tables of one generated package, as the fake broker needs them, and its
    ``records`` module."""

    def __init__(self, package: GeneratedPackage) -> None:
        self.codecs: dict[type, Any] = package.module("_codec").CODECS
        self.records: Any = package.module("records")
        self._defaults: dict[type, Any] = {}
        self._fields: dict[type, tuple[str, ...]] = {}
        self._attrs: dict[tuple[type, Names], dict[str, str | None]] = {}
        self._conforms: dict[tuple[type, type, Names], bool] = {}
        self._builds: dict[tuple[type, Names, tuple[str, ...]], tuple[str | None, ...]] = {}
        self._fittings: dict[tuple[type, int], _Fitting] = {}
        self._items: dict[tuple[type, str, Names], type] = {}

    # --- fields and their names ---------------------------------------------------------

    def fields(self, cls: type) -> tuple[str, ...]:
        known = self._fields.get(cls)
        if known is None:
            known = self._fields[cls] = tuple(spec[0] for spec in self.codecs[cls].fields)
        return known

    def attr(self, cls: type, name: str, names: Names = PLAIN) -> str | None:
        """The attribute of ``cls`` that holds field ``name`` (its newest name): the name
        itself (with the trailing ``_`` of a name that is a Python keyword or method), an
        older name from ``names``, or None when this release's class has none of them."""
        table = self._attrs.get((cls, names))
        if table is None:
            table = self._attrs[(cls, names)] = {}
        found = table.get(name, _MISSING)
        if found is _MISSING:
            known = self.fields(cls)
            found = None
            for candidate in (name, *names.renamed.get(name, ())):
                for spelled in (candidate, f"{candidate}_"):
                    if spelled in known:
                        found = spelled
                        break
                if found is not None:
                    break
            table[name] = found
        return found  # type: ignore[return-value]

    def has(self, cls: type, name: str, names: Names = PLAIN) -> bool:
        return self.attr(cls, name, names) is not None

    def item(self, cls: type, name: str, names: Names = PLAIN) -> Any:
        """The class of the structs in field ``name`` of ``cls``."""
        found = self._items.get((cls, name, names))
        if found is not None:
            return found
        attr = self.attr(cls, name, names)
        for spec in self.codecs[cls].fields:
            if spec[0] == attr and len(spec) > 2:
                self._items[(cls, name, names)] = spec[2]
                return spec[2]
        raise KeyError(f"{cls.__name__} has no struct field {name}")

    # --- building -----------------------------------------------------------------------

    def make(self, cls: type, **values: Any) -> Any:
        """``cls(**values)`` without the fields this spec release's class lacks (lenient:
        for ``control`` functions, whose fields are the user's to choose)."""
        kept = {}
        for name, value in values.items():
            attr = self.attr(cls, name)
            if attr is not None:
                kept[attr] = value
        return cls(**kept)

    def build(self, cls: type, names: Names, values: Mapping[str, Any]) -> Any:
        """``cls`` with ``values`` given under the newest names (strict: see the module)."""
        key = (cls, names, tuple(values))
        attrs = self._builds.get(key)
        if attrs is None:  # the attributes of these names, once per class and call site
            found = []
            for name in values:
                attr = self.attr(cls, name, names)
                if attr is None and name not in names.absent:
                    raise KeyError(f"{cls.__name__} has no field {name} (nor an older name of it)")
                found.append(attr)
            attrs = self._builds[key] = tuple(found)
        return cls(**{a: v for a, v in zip(attrs, values.values()) if a is not None})

    # --- reading ------------------------------------------------------------------------

    def view(self, obj: Any, protocol: type, names: Names) -> Any:
        """``obj`` as ``protocol`` reads it (see the module)."""
        if obj is None or self.conforms(type(obj), protocol, names):
            return obj
        return _View(obj, self, protocol, names)

    def conforms(self, cls: type, protocol: type, names: Names) -> bool:
        """Whether ``cls`` (and the structs inside it) has every field of ``protocol``
        under the protocol's own names."""
        key = (cls, protocol, names)
        known = self._conforms.get(key)
        if known is None:
            known = True
            for name, child in _children(protocol).items():
                if name not in self.fields(cls):
                    known = False
                elif child is not None and not self.conforms(self.item(cls, name), child, names):
                    known = False
            self._conforms[key] = known
        return known

    def unreadable(self, cls: type, protocol: type, names: Names) -> list[str]:
        """The fields of ``protocol`` that a ``view`` of a ``cls`` could not read (neither
        the class nor ``names`` knows them), as dotted paths: empty when it reads all."""
        out = []
        for name, child in _children(protocol).items():
            attr = self.attr(cls, name, names)
            if attr is None:
                if name not in names.absent:
                    out.append(name)
            elif child is not None:
                try:
                    inner = self.item(cls, name, names)
                except KeyError:
                    out.append(f"{name} (not a struct)")
                    continue
                out += [f"{name}.{path}" for path in self.unreadable(inner, child, names)]
        return out

    # --- fitting a response to its version ----------------------------------------------

    def default(self, cls: type) -> Any:
        if cls not in self._defaults:
            self._defaults[cls] = cls()
        return self._defaults[cls]

    def fit(self, obj: Any, version: int) -> Any:
        """``obj`` with every field that ``version`` lacks reset to its default, and None
        replaced by the default where the version cannot carry a null (in place)."""
        plan = self.codecs[type(obj)].plans.get(version)
        if plan is None:
            return obj
        self._fit(obj, plan)
        return obj

    def _fit(self, obj: Any, plan: Any) -> None:
        cls = type(obj)
        fitting = self._fittings.get((cls, id(plan)))
        if fitting is None:
            fitting = self._fittings[(cls, id(plan))] = self._fitting(cls, plan)
        absent, not_null, children = fitting
        for attr, value in absent:
            setattr(obj, attr, value)
        for attr, value in not_null:
            if getattr(obj, attr) is None:
                setattr(obj, attr, value)
        for attr, array, child in children:
            value = getattr(obj, attr)
            if value is None:
                continue
            if array:
                for item in value:
                    self._fit(item, child)
            else:
                self._fit(value, child)

    def _fitting(self, cls: type, plan: Any) -> _Fitting:
        """What fitting a ``cls`` to ``plan`` does (worked out once per class and version):
        the fields the version lacks, with their defaults; the ones it cannot carry null,
        with their defaults; the struct fields to fit in turn."""
        default = self.default(cls)
        on_wire = {f.attr: f for f in (*plan.fields, *plan.tagged)}
        absent = tuple((a, getattr(default, a)) for a in self.fields(cls) if a not in on_wire)
        not_null = tuple(
            (a, getattr(default, a)) for a, spec in on_wire.items() if not spec.kind.nullable
        )
        children = tuple(
            (a, bool(spec.kind.array), spec.child)
            for a, spec in on_wire.items()
            if spec.child is not None
        )
        return absent, not_null, children


class _View:
    """A generated object read under a protocol's (newest) names."""

    __slots__ = ("_obj", "_shapes", "_protocol", "_names")

    def __init__(self, obj: Any, shapes: Shapes, protocol: type, names: Names) -> None:
        self._obj, self._shapes, self._protocol, self._names = obj, shapes, protocol, names

    def __getattr__(self, name: str) -> Any:
        attr = self._shapes.attr(type(self._obj), name, self._names)
        if attr is None:
            if name in self._names.absent:
                return self._names.absent[name]
            raise AttributeError(f"{type(self._obj).__name__} has no field {name}")
        value = getattr(self._obj, attr)
        child = _children(self._protocol).get(name)
        if child is None or value is None:
            return value
        if isinstance(value, (list, tuple)):
            return [self._shapes.view(item, child, self._names) for item in value]
        return self._shapes.view(value, child, self._names)


_CHILDREN: dict[type, dict[str, type | None]] = {}


def _children(protocol: type) -> dict[str, type | None]:
    """The fields a protocol declares -> the protocol of the structs in it (None for a
    plain value)."""
    known = _CHILDREN.get(protocol)
    if known is None:
        known = _CHILDREN[protocol] = {
            name: _struct_protocol(hint) for name, hint in typing.get_type_hints(protocol).items()
        }
    return known


def _struct_protocol(hint: Any) -> type | None:
    if getattr(hint, "_is_protocol", False):
        return typing.cast(type, hint)
    origin = typing.get_origin(hint)
    if origin in (Sequence, list, tuple, typing.Union, types.UnionType):
        for arg in typing.get_args(hint):
            found = _struct_protocol(arg)
            if found is not None:
                return found
    return None
