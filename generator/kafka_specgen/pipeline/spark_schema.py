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

from typing import Any

from ..model import FieldType, Message, Struct
from ..wiretypes import WIRE_TYPES


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
    return WIRE_TYPES[ftype.text].spark


def struct_type(struct: Struct) -> dict[str, Any]:
    fields = [column(f.attr, field_type(f.type, f.struct)) for f in struct.fields]
    return {"type": "struct", "fields": [*fields, UNKNOWN_TAGGED_FIELDS]}


def spark_schemas(messages: list[Message]) -> dict[str, dict[str, Any]]:
    """Message name -> its ``StructType`` JSON dict, sorted by name."""
    return {m.name: struct_type(m.root) for m in sorted(messages, key=lambda m: m.name)}
