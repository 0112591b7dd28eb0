"""A field's default: its spec text checked against the field's type and turned into a
Python value, as Kafka's generator does (``FieldSpec.fieldDefault``)."""

from __future__ import annotations

import base64
import re
import uuid
from typing import Any

from .model import EMPTY_STRUCT, FieldType
from .versions import Versions
from .wiretypes import INT_RANGES, WIRE_TYPES


def field_default(
    spec: dict[str, Any],
    ftype: FieldType,
    declared: Versions,
    nullable: Versions,
    fail: Any,
) -> Any:
    """The field's default as a Python value, checked like Kafka's ``fieldDefault``."""
    text = spec.get("default")
    nullable_everywhere = bool(declared) and declared in nullable
    if text == "null":
        if not nullable_everywhere:
            raise fail(
                "null-default",
                f"default 'null' needs nullableVersions to cover "
                f"every version of the field ({declared}), not {nullable}",
            )
        return None
    kind = ftype.text
    if text is None or text == "":
        if ftype.is_array:
            return []
        if ftype.is_struct:
            return EMPTY_STRUCT
        if kind == "records" and nullable_everywhere:
            return None
        return WIRE_TYPES[kind].default
    if ftype.is_array or ftype.is_struct or kind in ("bytes", "records"):
        raise fail(
            "bad-default",
            f"a {kind} field only takes an empty or 'null' default, " f"not {text!r}",
        )
    if kind in INT_RANGES:
        return int_default(text, kind, fail)
    if kind == "bool":
        if text.lower() not in ("true", "false"):
            raise fail("bad-default", f"bool default must be true or false, not {text!r}")
        return text.lower() == "true"
    if kind == "float64":
        try:
            value = float(text)
        except ValueError:
            raise fail("bad-default", f"float64 default {text!r} is not a number") from None
        return value
    if kind == "uuid":
        # Kafka reads these with Java's URL-safe decoder: no '+' or '/'.
        raw = b""
        if re.fullmatch(r"[A-Za-z0-9_-]{22}(==)?", text):
            raw = base64.urlsafe_b64decode(text[:22] + "==")
        if len(raw) != 16:
            raise fail("bad-default", f"uuid default {text!r} is not base64 of 16 bytes")
        return uuid.UUID(bytes=raw)
    return text  # string


def int_default(text: str, kind: str, fail: Any) -> int:
    match = re.fullmatch(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|[0-9]+)\s*", text)
    if match is None:
        raise fail("bad-default", f"{kind} default {text!r} is not a number")
    sign, digits = match.groups()
    value = int(digits, 16 if digits[:2].lower() == "0x" else 10)
    if sign == "-":
        value = -value
    lo, hi = INT_RANGES[kind]
    if not lo <= value <= hi:
        raise fail("bad-default", f"{kind} default {text} is outside {lo}..{hi}")
    return value
