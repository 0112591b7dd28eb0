"""Stage 2: check a loaded spec against the JSON Schema of the spec format.

The schema (``spec.schema.json`` beside this module) fixes the shape: which keys exist,
their JSON types, enums, name and version-string patterns. Semantic rules that span
several keys (tags in flexible versions, defaults valid for the type, ...) belong to the
``model`` stage.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path
from typing import Any, Iterable

# jsonschema ships no type hints; "unused-ignore" keeps this line clean once stubs exist.
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped, unused-ignore]
from jsonschema.validators import extend  # type: ignore[import-untyped, unused-ignore]

from .errors import SpecError, raise_all
from .load import RawSpec

SCHEMA_PATH = Path(__file__).with_name("spec.schema.json")

PathItem = str | int

# When one object breaks several rules, report them in this order (most telling first:
# a misspelt key also shows up as a missing one).
_RULE_ORDER = {"unknown-key": 0, "missing-key": 1, "bad-value": 2}


def validate_spec(raw: RawSpec) -> None:
    """Raise the schema violations in ``raw``, if any: the first one at each place (a
    place's later ones mostly follow from it), in the order of the file."""
    errors: Iterable[ValidationError] = _validator().iter_errors(raw.data)
    first_at: dict[tuple[object, ...], ValidationError] = {}
    for error in sorted(errors, key=_error_order):
        first_at.setdefault(tuple(error.absolute_path), error)
    raise_all([_to_spec_error(error, raw) for error in first_at.values()])


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    # JSON Schema counts 1.0 as an integer; the later stages expect Python ints only.
    type_checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer",
        lambda _checker, value: isinstance(value, int) and not isinstance(value, bool),
    )
    strict_integers = extend(Draft202012Validator, type_checker=type_checker)
    return strict_integers(schema)


def _rule(error: ValidationError) -> str:
    if error.validator == "additionalProperties":
        return "unknown-key"
    if error.validator == "required":
        return "missing-key"
    return "bad-value"


def _error_order(error: ValidationError) -> tuple[list[tuple[int, int, str]], int, str]:
    """Sort by path (indexes as numbers: fields/2 before fields/10), then by rule."""
    position = [
        (0, item, "") if isinstance(item, int) else (1, 0, str(item))
        for item in error.absolute_path
    ]
    return position, _RULE_ORDER[_rule(error)], str(error.message)


def _to_spec_error(error: ValidationError, raw: RawSpec) -> SpecError:
    path: list[PathItem] = list(error.absolute_path)
    struct, field, rest = _locate(raw.data, path)
    rule = _rule(error)
    if rule == "unknown-key":
        message = _unknown_key_message(error)
    elif rule == "missing-key":
        missing = [key for key in error.validator_value if key not in error.instance]
        message = f"missing required {_keys_phrase(missing)}"
    else:
        message = _bad_value_message(error, rest)
    if rest and rule != "bad-value":
        message = f"{_format_path(rest)}: {message}"
    return SpecError(raw.source, rule, message, struct=struct, field=field)


def _locate(
    data: dict[str, Any], path: list[PathItem]
) -> tuple[str | None, str | None, list[PathItem]]:
    """Follow ``path`` through nested fields: the struct and field it names, and the rest.

    The struct is the message (top level), a common struct, or the struct type of the
    enclosing field; the rest is the path below the innermost named field or struct.
    """
    struct = _name_of(data)
    field: str | None = None
    node: Any = data  # the paths come from validating data, so every step exists
    node_is_field = False
    rest: list[PathItem] = []
    index = 0
    while index < len(path):
        key = path[index]
        item_index = path[index + 1] if index + 1 < len(path) else None
        if key in ("fields", "commonStructs") and isinstance(item_index, int):
            item = node[key][item_index]
            if key == "commonStructs":
                struct, field = _name_of(item), None
            else:
                # A nested field belongs to the struct its enclosing field declares.
                if node_is_field:
                    struct = _struct_type_of(node) or field or struct
                field = _name_of(item)
            # An item without a name is pointed at by its position instead.
            rest = [] if _name_of(item) else [key, item_index]
            node, node_is_field = item, key == "fields"
            index += 2
        else:
            rest.append(key)
            node = node[key]
            index += 1
    return struct, field, rest


def _name_of(obj: Any) -> str | None:
    name = obj.get("name") if isinstance(obj, dict) else None
    return name if isinstance(name, str) else None


def _struct_type_of(field: Any) -> str | None:
    field_type = field.get("type") if isinstance(field, dict) else None
    return field_type.removeprefix("[]") if isinstance(field_type, str) else None


def _unknown_key_message(error: ValidationError) -> str:
    allowed = sorted(error.schema.get("properties", {}))
    unknown = sorted(key for key in error.instance if key not in allowed)
    message = f"unknown {_keys_phrase(unknown)}"
    suggestions = difflib.get_close_matches(unknown[0], allowed, n=1) if len(unknown) == 1 else []
    if suggestions:
        message += f" (did you mean '{suggestions[0]}'?)"
    return message


def _bad_value_message(error: ValidationError, rest: list[PathItem]) -> str:
    where = f" for '{_format_path(rest)}'" if rest else ""
    expected = error.schema.get("description")
    if expected is None:
        return f"bad value{where}: {error.message}"
    return f"bad value {_shorten(repr(error.instance))}{where}: expected {expected}"


def _format_path(path: list[PathItem]) -> str:
    text = ""
    for item in path:
        if isinstance(item, int):
            text += f"[{item}]"
        else:
            text += f".{item}" if text else item
    return text


def _keys_phrase(keys: list[str]) -> str:
    quoted = ", ".join(f"'{key}'" for key in keys)
    return f"key {quoted}" if len(keys) == 1 else f"keys {quoted}"


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
