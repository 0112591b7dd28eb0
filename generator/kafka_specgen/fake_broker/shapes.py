"""Building responses that fit the version they are sent at, whatever the spec release.

A broker answers one request at many versions, and the classes of a generated package
carry the fields of every version. ``make`` builds an object from the fields its class has
(a field a release does not know is left out), and ``fit`` resets, before encoding, every
field the version lacks: the package's encoder refuses a non-default value in a field the
version has no room for, rightly, since a client would never see it.
"""

from __future__ import annotations

from typing import Any

from ..library import GeneratedPackage


class Shapes:
    """The field tables of one generated package, as the fake broker needs them, and its
    ``records`` module."""

    def __init__(self, package: GeneratedPackage) -> None:
        self.codecs: dict[type, Any] = package.module("_codec").CODECS
        self.records: Any = package.module("records")
        self._defaults: dict[type, Any] = {}

    def fields(self, cls: type) -> tuple[str, ...]:
        return tuple(spec[0] for spec in self.codecs[cls].fields)

    def item(self, cls: type, attr: str) -> Any:
        """The class of the structs in field ``attr`` of ``cls``."""
        for spec in self.codecs[cls].fields:
            if spec[0] == attr and len(spec) > 2:
                return spec[2]
        raise KeyError(f"{cls.__name__} has no struct field {attr}")

    def has(self, cls: type, attr: str) -> bool:
        return attr in self.fields(cls)

    def make(self, cls: type, **values: Any) -> Any:
        """``cls(**values)`` without the fields this spec release's class lacks."""
        known = self.fields(cls)
        # a field named like a Python keyword or a method has a trailing "_" (``offset_``)
        named = {k if k in known else f"{k}_": v for k, v in values.items()}
        return cls(**{k: v for k, v in named.items() if k in known})

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
        default = self.default(type(obj))
        on_wire = {f.attr: f for f in (*plan.fields, *plan.tagged)}
        for attr in self.fields(type(obj)):
            field = on_wire.get(attr)
            if field is None:
                setattr(obj, attr, getattr(default, attr))
                continue
            value = getattr(obj, attr)
            if value is None and not field.kind.nullable:
                setattr(obj, attr, getattr(default, attr))
            elif field.child is not None and value is not None:
                for item in value if field.kind.array else (value,):
                    self._fit(item, field.child)
