# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Encode errors: which field made a writer fail, and why.

Writers check nothing they need not; when one fails, ``encode_error`` walks the plan of
the version being written, field by field in wire order, and names the first value that
cannot be written (with its path, e.g. ``MetadataRequest.topics[2].name``). This runs only
after something went wrong.
"""

from __future__ import annotations

from uuid import UUID

from ._plan import Kind, Plan
from .errors import EncodeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}
_TYPES: dict[str, type | tuple[type, ...]] = {
    "bool": bool,
    "float64": (float, int),
    "string": str,
    "bytes": (bytes, bytearray, memoryview),
    "records": (bytes, bytearray, memoryview),
    "uuid": UUID,
}
MAX_STRING_LENGTH = 0x7FFF


def encode_error(obj: Any, plan: Plan, exc: Exception, name: str, version: int) -> EncodeError:
    """The ``EncodeError`` for ``exc``, raised while writing ``obj`` with ``plan``."""
    if isinstance(exc, EncodeError):
        # Raised by a writer about one of its own fields: say where that struct sits.
        where = _locate(obj, plan, exc.obj, "")
        path = _join(where, exc.path) if where is not None else exc.path
        return EncodeError(exc.reason, _join(name, path), exc.obj, version)
    found = _problem(obj, plan, "")
    if found is not None:
        path, reason, holder = found
        return EncodeError(reason, _join(name, path), holder, version)
    return EncodeError(f"{type(exc).__name__}: {exc}", name, obj, version)


def _problem(obj: Any, plan: Plan, path: str) -> tuple[str, str, Any] | None:
    """The first field of ``obj`` (in wire order, depth first) that cannot be written."""
    for f in (*plan.fields, *plan.tagged):
        value = getattr(obj, f.attr, None)
        here = _join(path, f.attr)
        if f.child is not None and f.kind.array and isinstance(value, (tuple, list)):
            # An array of structs: each item is named by its index.
            for index, item in enumerate(value):
                found = _struct_problem(item, f.child, f"{here}[{index}]", obj)
                if found is not None:
                    return found
            continue
        reason = value_problem(value, f.kind, f.tag is not None)
        if reason is not None:
            return here, reason, obj
        if f.child is not None and value is not None:
            found = _problem(value, f.child, here)
            if found is not None:
                return found
    unknown = getattr(obj, "unknown_tagged_fields", ())
    tags = [getattr(raw, "tag", None) for raw in unknown]
    if len(set(tags)) != len(tags):
        return _join(path, "unknown_tagged_fields"), f"repeats a tag: {tags}", obj
    return None


def _struct_problem(item: Any, plan: Plan, path: str, holder: Any) -> tuple[str, str, Any] | None:
    """What is wrong with one struct of an array, at its own path."""
    if item is None:
        return path, "None in a field that is not nullable at this version", holder
    reason = _primitive_problem(item, "struct")
    if reason is not None:
        return path, reason, holder
    return _problem(item, plan, path)


def value_problem(value: object, kind: Kind, tagged: bool = False) -> str | None:
    """What is wrong with ``value`` for a field of wire kind ``kind``, or None."""
    if value is None:
        # A tagged struct that is None is simply not written.
        if kind.nullable or (tagged and kind.type == "struct" and not kind.array):
            return None
        return "None in a field that is not nullable at this version"
    if kind.array:
        if not isinstance(value, (tuple, list)):
            return f"expected a tuple or a list, got {type(value).__name__}"
        element = Kind(kind.type)
        for index, item in enumerate(value):
            problem = value_problem(item, element)
            if problem:
                return f"item {index}: {problem}"
        return None
    return _primitive_problem(value, kind.type)


def _primitive_problem(value: object, type_name: str) -> str | None:
    limits = INT_RANGES.get(type_name)
    if limits is not None:
        lo, hi = limits
        if not isinstance(value, int):
            return f"expected an int for {type_name}, got {type(value).__name__}"
        if not lo <= value <= hi:
            return f"{value} is out of range for {type_name} ({lo}..{hi})"
        return None
    if type_name == "struct":
        return None if hasattr(value, "to_dict") else f"expected a struct, got {type(value)}"
    wanted = _TYPES[type_name]
    if not isinstance(value, wanted):
        return f"expected {type_name}, got {type(value).__name__}"
    if isinstance(value, str):
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > MAX_STRING_LENGTH:
            return f"string of {size} UTF-8 bytes is longer than 32767"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"not encodable as UTF-8: {exc.reason}"
    return None


def _locate(obj: Any, plan: Plan, target: object, path: str) -> str | None:
    """The path of ``target`` (a struct value) inside ``obj``, found by identity."""
    if obj is target:
        return path
    for f in (*plan.fields, *plan.tagged):
        if f.child is None:
            continue
        value = getattr(obj, f.attr, None)
        if value is None:
            continue
        items = enumerate(value) if f.kind.array else [(None, value)]
        for index, item in items:
            here = _join(path, f.attr) if index is None else f"{_join(path, f.attr)}[{index}]"
            found = _locate(item, f.child, target, here)
            if found is not None:
                return found
    return None


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path and name else path or name
