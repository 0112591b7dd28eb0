"""Typed views: what the module template needs to know, worked out from models and plans.

The template writes every character of code; these frozen records decide everything it
branches on (an enum per choice, no dicts), and ``ModuleImports`` collects each name the
code will use while the views are built, so a module imports exactly what it needs. The
steps of readers and writers have views of their own (``steps``); ``view_builder`` builds
them all. Also here: the facts of a field that several views need.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .layout import Call, Code, pybytes, pystr
from .model import Field, Message, snake_case

if TYPE_CHECKING:
    from .steps import StepView


class Default(enum.Enum):
    """What a field holds when nobody set it."""

    NONE = "none"
    EMPTY_ARRAY = "empty array"
    STRUCT = "a fresh empty struct"
    VALUE = "a literal value"


class Store(enum.Enum):
    """How a constructor stores a field's argument."""

    AS_IS = "as is"
    TUPLE = "as a tuple (None, strings, bytes and dicts as they are: the encoder names them)"
    FRESH_STRUCT = "a fresh struct for the default marker"
    TAGGED_STRUCT = "None for a struct equal to its default"


class Flavour(enum.Enum):
    """The two builds of one package, from the same templates."""

    PURE = "pure"
    """Standard library only: vendorable anywhere (the default)."""
    MYPYC = "mypyc"
    """Shaped for mypyc: readers build objects with native constructors and read
    fixed-size fields with librt; compiled by ``make compiled``."""


#: MYPYC flavour: how a fixed-size value is read at offset ``{at}`` of ``buf``: librt's
#: big-endian readers (an unsigned value is its signed read, masked as a Python int).


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


@dataclass(frozen=True)
class FieldView:
    """One attribute of a generated class (the union of all versions)."""

    attr: str
    annotation: str
    param: str
    """The constructor parameter's annotation (arrays take any iterable)."""
    default: Default
    literal: str
    """The default as an expression (``0``, ``()``, ``None``, ``_X_DEFAULT``, ...)."""
    store: Store
    struct_class: str
    doc: str
    empty_const: str
    """``_X_DEFAULT``: a shared empty struct to compare against (struct fields only)."""


@dataclass(frozen=True)
class MessageFacts:
    api_key: int | None
    min_version: int
    max_version: int
    flexible_min: int | None
    latest_version_unstable: bool
    response_class: str | None
    """A request's response class, when the module has it (``MetadataRequest.Response``)."""


@dataclass(frozen=True)
class ClassView:
    class_name: str
    doc: str
    facts: MessageFacts | None
    fields: tuple[FieldView, ...]
    has_unknown_tags: bool
    has_known_tags: bool
    binding: Call
    """The ``bind(...)`` call handing the runtime this class's field table and plans."""
    default_const: str
    """``_X_DEFAULT`` if some field compares against an empty instance, else empty."""


@dataclass(frozen=True)
class GuardView:
    """A field this version lacks: writing it is refused unless it holds its default."""

    attr: str
    default: Default
    literal: str
    nullable_array: bool


@dataclass(frozen=True)
class PlanView:
    const: str
    function: str
    class_name: str
    struct_name: str
    version_label: str
    plural: bool
    flexible: bool
    has_tagged: bool
    defaults: tuple[tuple[str, Default, str, str], ...]
    """``(attr, default, literal, struct class)`` the reader sets before reading."""
    steps: tuple[StepView, ...]
    guards: tuple[GuardView, ...]
    refuse_unknown_tags: bool
    """A classic version of a class that is flexible elsewhere: unknown tags are refused."""
    table: Call
    """The ``Plan(...)`` call: the runtime's table of this layout."""
    constructor_args: tuple[str, ...]
    """MYPYC flavour: the reader's constructor call, one expression per parameter."""

    @property
    def constructor_call(self) -> Call:
        return Call(self.class_name, tuple(Code(arg) for arg in self.constructor_args))


@dataclass(frozen=True)
class ModuleView:
    header: str
    doc: str
    imports: ModuleImports
    formats: tuple[str, ...]
    """Struct formats with module-level bound ``unpack_from`` / ``pack`` methods."""
    unpacks: frozenset[str]
    packs: frozenset[str]
    iter_unpacks: tuple[str, ...]
    classes: tuple[ClassView, ...]
    plans: tuple[PlanView, ...]
    native: bool
    """The MYPYC flavour."""
    response_links: tuple[tuple[str, str], ...]
    """(request class, response class): set once both classes exist."""


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
