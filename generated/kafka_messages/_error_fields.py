# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The walk behind ``error_codes.errors_in``: every ``error_code`` field of a message."""

from __future__ import annotations

from dataclasses import fields, is_dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:  # names for annotations only: importing typing costs about 3 ms
    from collections.abc import Iterator


def error_fields(obj: object, path: str = "") -> Iterator[tuple[str, int]]:
    """``(path, code)`` of every non-zero ``error_code`` in ``obj`` and the structs and
    arrays of structs it holds, depth first in field order."""
    if not is_dataclass(obj):
        return
    for field in fields(obj):
        value = getattr(obj, field.name)
        where = f"{path}.{field.name}" if path else field.name
        if field.name == "error_code":
            if isinstance(value, int) and value != 0:
                yield where, value
        elif isinstance(value, tuple):
            for index, item in enumerate(value):
                yield from error_fields(item, f"{where}[{index}]")
        else:
            yield from error_fields(value, where)
