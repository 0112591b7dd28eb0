"""The tables generated modules hand to the runtime: one ``Plan`` per wire layout.

A plan says what one struct looks like on the wire at a set of versions: its regular
fields in order, its tagged fields, and the reader and writer functions generated for it.
The generated readers and writers are the fast path; the runtime walks the same plans to
decode with exact error locations, to find which field an encoder choked on, and to read
and write tagged fields.

A field's wire kind is a short string: ``[c][[]]type[?]``. ``c`` marks the compact
(flexible) encoding, ``[]`` an array of ``type``, ``?`` a nullable field; ``type`` is a
primitive (``int32``, ``string``, ``uuid``, ...) or ``struct``. So ``c[]struct`` is a
compact array of structs and ``string?`` a classic nullable string.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:  # names for annotations only: importing typing costs about 3 ms
    from typing import Any, Callable, Union

    Buffer = Union[bytes, bytearray, memoryview]
    Reader = Callable[[bytes, int], tuple[Any, int]]
    Writer = Callable[[Any, bytearray], None]
    FieldSpec = Union[tuple[str, str], tuple[str, str, "Plan"]]
    TagSpec = Union[tuple[int, str, str], tuple[int, str, str, "Plan"]]

NO_TAGS: frozenset[int] = frozenset()


@dataclass(slots=True)  # not frozen: mypyc's build cannot construct frozen dataclasses
class RawTaggedField:
    """A tagged field this package does not know: kept as raw bytes, written back as is."""

    tag: int
    data: bytes


class Kind:
    """A parsed wire kind (see the module docstring)."""

    __slots__ = ("text", "compact", "array", "type", "nullable")

    def __init__(self, text: str) -> None:
        self.text = text
        # No type name starts with "c", so a leading "c" is always the compact mark.
        self.compact = text.startswith("c")
        rest = text[1:] if self.compact else text
        self.array = rest.startswith("[]")
        if self.array:
            rest = rest[2:]
        self.nullable = rest.endswith("?")
        self.type = rest.rstrip("?")


class FieldPlan:
    """One field of a plan: its attribute, wire kind and (for structs) the child plan."""

    __slots__ = ("attr", "kind", "child", "tag")

    def __init__(self, attr: str, kind: Kind, child: Plan | None, tag: int | None) -> None:
        self.attr = attr
        self.kind = kind
        self.child = child
        self.tag = tag


class Plan:
    """One struct's wire layout at a set of versions, with its generated codec functions."""

    __slots__ = ("cls", "read", "write", "fields", "tagged", "flexible", "invalid_tags")

    def __init__(
        self,
        cls: type,
        read: Reader,
        write: Writer,
        fields: tuple[FieldSpec, ...] = (),
        tagged: tuple[TagSpec, ...] = (),
        *,
        flexible: bool = True,
        invalid_tags: tuple[int, ...] = (),
    ) -> None:
        self.cls = cls
        self.read = read
        self.write = write
        self.fields = tuple(_field(spec, None) for spec in fields)
        self.tagged = tuple(_field(spec[1:], spec[0]) for spec in tagged)
        self.flexible = flexible
        self.invalid_tags = frozenset(invalid_tags)


def _field(spec: tuple[Any, ...], tag: int | None) -> FieldPlan:
    child = spec[2] if len(spec) > 2 else None
    return FieldPlan(spec[0], Kind(spec[1]), child, tag)
