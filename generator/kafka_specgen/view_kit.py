"""What the view records (``views``) and the step records (``steps``) share: the choices
a field's default and a package's flavour make, the import collector, and the facts of a
field that several views need. A module of its own, so neither of the two imports the other
for it.
"""

from __future__ import annotations

import enum
import math

from .layout import pybytes, pystr
from .model import Field, Message, snake_case


class Default(enum.Enum):
    """What a field holds when nobody set it."""

    NONE = "none"
    EMPTY_ARRAY = "empty array"
    STRUCT = "a fresh empty struct"
    VALUE = "a literal value"


class Flavour(enum.Enum):
    """The two builds of one package, from the same templates."""

    PURE = "pure"
    """Standard library only: vendorable anywhere (the default)."""
    MYPYC = "mypyc"
    """Shaped for mypyc: readers build objects with native constructors and read
    fixed-size fields with librt; compiled by ``make compiled``."""


#: The runtime helpers (``_read``, ``_write``) that generated readers and writers call for a
#: value with a length or count in front: ``(what, compact, nullable) -> (reader, writer)``.
#: A null array is written by the template itself, so nullable arrays share the writer of
#: their form. ``tests/runtime/test_wiretypes.py`` holds every name to the runtime.
LENGTH_HELPERS: dict[tuple[str, bool, bool], tuple[str, str]] = {
    ("count", False, False): ("read_count", "write_count"),
    ("count", False, True): ("read_nullable_count", "write_count"),
    ("count", True, False): ("read_compact_count", "write_compact_count"),
    ("count", True, True): ("read_compact_nullable_count", "write_compact_count"),
    ("string", False, False): ("read_string", "write_string"),
    ("string", False, True): ("read_nullable_string", "write_nullable_string"),
    ("string", True, False): ("read_compact_string", "write_compact_string"),
    ("string", True, True): ("read_compact_nullable_string", "write_compact_nullable_string"),
    ("bytes", False, False): ("read_bytes", "write_bytes"),
    ("bytes", False, True): ("read_nullable_bytes", "write_nullable_bytes"),
    ("bytes", True, False): ("read_compact_bytes", "write_compact_bytes"),
    ("bytes", True, True): ("read_compact_nullable_bytes", "write_compact_nullable_bytes"),
    ("fixed_array", False, False): ("read_fixed_array", "write_fixed_array"),
    ("fixed_array", False, True): ("read_nullable_fixed_array", "write_fixed_array"),
    ("fixed_array", True, False): ("read_compact_fixed_array", "write_compact_fixed_array"),
    ("fixed_array", True, True): (
        "read_compact_nullable_fixed_array",
        "write_compact_fixed_array",
    ),
}


def reader_name(function: str) -> str:
    """The module's own reader of one plan (``_read_metadata_request_v0_3``): the name the
    reader is defined under, and called and tabled by."""
    return f"_read_{function}"


def writer_name(function: str) -> str:
    """The module's own writer of one plan (``_write_metadata_request_v0_3``)."""
    return f"_write_{function}"


class ModuleImports:
    """Names a module uses, by the module they come from; ``typing`` only for checkers."""

    def __init__(self) -> None:
        self.names: dict[str, set[str]] = {}
        self.type_only: dict[str, set[str]] = {}

    def use(self, module: str, name: str) -> str:
        self.names.setdefault(module, set()).add(name)
        return name

    def annotate(self, module: str, name: str) -> str:
        """A name only annotations use: imported for type checkers alone."""
        self.type_only.setdefault(module, set()).add(name)
        return name

    def lines(self, names: dict[str, set[str]]) -> list[tuple[str, str]]:
        """``(module, "a, b")`` pairs, stdlib first, then this package's own modules."""
        stdlib = sorted(m for m in names if not m.startswith("."))
        local = sorted(m for m in names if m.startswith("."))
        return [(m, ", ".join(sorted(names[m]))) for m in (*stdlib, *local)]

    @property
    def runtime(self) -> list[tuple[str, str]]:
        return self.lines({m: n for m, n in self.names.items() if m != "struct"})

    @property
    def checking(self) -> list[tuple[str, str]]:
        only = {m: n - self.names.get(m, set()) for m, n in self.type_only.items()}
        return self.lines({m: n for m, n in only.items() if n})


def struct_class(message: Message, f: Field) -> str:
    """The class of a struct field (or of its items), or "" for other fields."""
    return message.class_name(f.struct) if f.struct is not None else ""


def default_const(class_name: str) -> str:
    """The module constant holding an empty instance of ``class_name`` (compared against,
    never handed out, so never changed)."""
    return f"_{snake_case(class_name).upper()}_DEFAULT"


def field_annotation(f: Field, python: str) -> str:
    """The type of an attribute whose values are ``python``: a tuple for an array, ``|
    None`` when any version (or an absent tagged struct) can hold None."""
    annotation = f"tuple[{python}, ...]" if f.type.is_array else python
    if is_nullable_anywhere(f) or absent_is_none(f):
        annotation += " | None"
    return annotation


def absent_is_none(f: Field) -> bool:
    """A tagged struct field whose absence is None: no default struct is built per decode.
    Not so for a nullable one with a struct default, where None is a value of its own (a
    null marker on the wire) and absence means the default struct, as in Kafka."""
    if f.tag is None or not f.type.is_struct or not f.tagged_versions.intersect(f.versions):
        return False
    return not f.nullable_versions.intersect(f.tagged_versions) or f.default is None


def is_nullable_anywhere(f: Field) -> bool:
    return bool(f.nullable_versions.intersect(f.versions)) or f.default is None


def pylit(value: object) -> str:
    """A Python literal for a default or a table (never raw spec text)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if isinstance(value, str):
        return pystr(value)
    if isinstance(value, bytes):
        return pybytes(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)
    if isinstance(value, tuple):
        items = ", ".join(pylit(item) for item in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    raise TypeError(f"no literal for {value!r}")
