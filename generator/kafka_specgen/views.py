"""Typed views: what the module template needs to know, worked out from models and plans.

The template writes every character of code; these frozen records decide everything it
branches on (an enum per choice, no dicts), and ``ModuleImports`` (``view_kit``) collects
each name the code will use while the views are built, so a module imports exactly what it
needs. The steps of readers and writers have views of their own (``steps``); ``view_builder``
builds them all.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .layout import Call, Code
from .steps import StepView
from .view_kit import Default, ModuleImports


class Store(enum.Enum):
    """How a constructor stores a field's argument."""

    AS_IS = "as is"
    TUPLE = "as a tuple (None, strings, bytes and dicts as they are: the encoder names them)"
    FRESH_STRUCT = "a fresh struct for the default marker"
    TAGGED_STRUCT = "None for a struct equal to its default"


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
    reader: str
    """The name of this plan's reader function (``_read_...``); ``writer``: its writer."""
    writer: str
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
