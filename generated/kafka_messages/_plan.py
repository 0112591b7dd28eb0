# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""The tables generated modules hand to the runtime: one ``Plan`` per wire layout.

A plan says what one struct looks like on the wire at a set of versions: its regular
fields in order, its tagged fields, and the reader and writer functions generated for it.
The generated readers and writers are the fast path; the runtime walks the same plans to
decode with exact error locations, to find which field an encoder choked on, and to read
and write tagged fields.

Each field is one string, ``attr:kind`` (a tagged field ``tag:attr:kind``). A kind is ``[c][[]]type[?]``: ``c`` marks the compact (flexible)
encoding, ``[]`` an array of ``type``, ``?`` a nullable field; ``type`` is a primitive
(``int32``, ``string``, ``uuid``, ...) or ``struct``. So ``c[]struct`` is a compact array
of structs and ``string?`` a classic nullable string. Struct fields take their plans from
``children``, in order (the regular fields', then the tagged ones').
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:  # names for annotations only: importing typing costs about 3 ms
    from collections.abc import Iterator
    from typing import Any, Callable, Final, Union

    Buffer = Union[bytes, bytearray, memoryview]
    Reader = Callable[[bytes, int], tuple[Any, int]]
    Writer = Callable[[Any, bytearray], None]

NO_TAGS: Final[frozenset[int]] = frozenset()


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
        fields: tuple[str, ...] = (),
        *,
        tagged: tuple[str, ...] = (),
        children: tuple[Plan, ...] = (),
        flexible: bool = True,
        invalid_tags: tuple[int, ...] = (),
    ) -> None:
        self.cls = cls
        self.read = read
        self.write = write
        plans = iter(children)
        self.fields = tuple(_field(spec, None, plans) for spec in fields)
        self.tagged = tuple(
            _field(rest, int(tag), plans)
            for tag, _, rest in (spec.partition(":") for spec in tagged)
        )
        self.flexible = flexible
        self.invalid_tags = frozenset(invalid_tags)


def _field(spec: str, tag: int | None, children: Iterator[Plan]) -> FieldPlan:
    attr, _, kind_text = spec.partition(":")
    kind = Kind(kind_text)
    return FieldPlan(attr, kind, next(children) if kind.type == "struct" else None, tag)
