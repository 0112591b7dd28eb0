"""Spark schemas of the messages, in Spark's ``StructType`` JSON form (plain dicts).

One ``StructType`` per message, covering every version of it: a field that only some
versions have is still a column (nullable, as every column is; a version without the field
holds its default, as ``to_dict()`` gives it). The column names are the ``to_dict()`` keys,
so ``from_json(to_json(body), schema)`` reads a decoded message into nested columns.

Spark has no unsigned or UUID types: ``uint16`` becomes ``integer`` (int32), ``uint32``
becomes ``long`` (int64) and a ``uuid`` a ``string`` (Kafka's base64 text, as ``to_dict``
writes it). ``bytes`` and ``records`` are ``binary``. Unknown tagged fields are an
``unknown_tagged_fields`` column of ``array<struct<tag: long, data: binary>>`` in every
struct.
"""

from __future__ import annotations

import re
from typing import Any

from .model import FieldType, Message, Struct

SPARK_PRIMITIVES = {
    "bool": "boolean",
    "int8": "byte",
    "int16": "short",
    "int32": "integer",
    "int64": "long",
    "uint16": "integer",  # widened: Spark has no unsigned types
    "uint32": "long",  # widened
    "float64": "double",
    "string": "string",
    "bytes": "binary",
    "records": "binary",
    "uuid": "string",  # Kafka's base64 text of the 16 bytes
}


def column(name: str, spark_type: Any) -> dict[str, Any]:
    return {"name": name, "type": spark_type, "nullable": True, "metadata": {}}


UNKNOWN_TAGGED_FIELDS = column(
    "unknown_tagged_fields",
    {
        "type": "array",
        "elementType": {
            "type": "struct",
            "fields": [column("tag", "long"), column("data", "binary")],
        },
        "containsNull": True,
    },
)


def field_type(ftype: FieldType, struct: Struct | None) -> Any:
    if ftype.element is not None:
        element = field_type(ftype.element, struct)
        return {"type": "array", "elementType": element, "containsNull": True}
    if ftype.is_struct:
        assert struct is not None, f"struct {ftype.text} not resolved"
        return struct_type(struct)
    return SPARK_PRIMITIVES[ftype.text]


def struct_type(struct: Struct) -> dict[str, Any]:
    fields = [column(f.attr, field_type(f.type, f.struct)) for f in struct.fields]
    return {"type": "struct", "fields": [*fields, UNKNOWN_TAGGED_FIELDS]}


def spark_schemas(messages: list[Message]) -> dict[str, dict[str, Any]]:
    """Message name -> its ``StructType`` JSON dict, sorted by name."""
    return {m.name: struct_type(m.root) for m in sorted(messages, key=lambda m: m.name)}


def assignment(target: str, value: Any, width: int = 100) -> str:
    """``target`` followed by a Python literal of ``value`` (a schema: dicts, lists, str,
    bool), laid out as black lays it out at line length ``width``. Black then has nothing to
    split: on the trunk corpus it formats this module in half the time."""
    return target + _layout(value, 0, len(target), 0, width)


def _flat(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_flat(k)}: {_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        # Names and type names: double quotes as black writes them; anything else repr.
        return f'"{value}"' if re.fullmatch(r"[\w.]*", value, re.ASCII) else repr(value)
    raise TypeError(f"no literal for {value!r}")


def _layout(value: Any, indent: int, before: int, after: int, width: int) -> str:
    """``value`` on one line if it fits between ``before`` and ``after`` characters of the
    line (indented ``indent``), else one item per line with trailing commas. A lone item
    that is itself a collection is split without a comma, as black does."""
    flat = _flat(value)
    fits = indent + before + len(flat) + after <= width
    if fits or not isinstance(value, (dict, list)) or not value:  # "{}" cannot be split
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        lines = [
            f"{pad}{_flat(k)}: {_layout(v, indent + 4, len(_flat(k)) + 2, 1, width)},"
            for k, v in value.items()
        ]
        return "{\n" + "\n".join(lines) + "\n" + " " * indent + "}"
    comma = "" if len(value) == 1 and isinstance(value[0], (dict, list)) else ","
    lines = [f"{pad}{_layout(v, indent + 4, 0, len(comma), width)}{comma}" for v in value]
    return "[\n" + "\n".join(lines) + "\n" + " " * indent + "]"
