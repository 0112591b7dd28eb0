"""Steps of a reader and writer: one view type per kind of step, and what builds them.

A plan's regular fields, in wire order, become steps: runs of fixed-size fields (one
``struct`` call each), bools, strings and bytes, uuids, structs, and three kinds of array
(of fixed-size items; of strings, bytes or uuids; of structs).
Each kind has its own frozen view with only the facts its code needs; the templates branch
on ``step`` (a ``Step``), never on a missing attribute. ``StepBuilder`` also records what
the steps make the module import and define (struct formats, shared empty instances).
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field, replace
from typing import ClassVar

from .layout import Call, Code, pystr
from .model import EMPTY_STRUCT, Field
from .plan import FieldPlan, MessagePlans, StructPlan
from .view_kit import (
    LENGTH_HELPERS,
    Default,
    Flavour,
    ModuleImports,
    absent_is_none,
    default_const,
    field_annotation,
    is_nullable_anywhere,
    pylit,
    reader_name,
    struct_class,
    writer_name,
)
from .wiretypes import ARRAY_MIN_SIZE, WIRE_TYPES


class Step(enum.Enum):
    """One kind of step of a reader or writer."""

    FIXED_RUN = "a run of fixed-size fields, one struct call"
    BOOL = "a bool"
    STRING = "a string or bytes field (helper functions)"
    UUID = "a uuid"
    STRUCT = "a struct"
    FIXED_ARRAY = "an array of fixed-size items, one struct call"
    ARRAY = "an array of strings, bytes or uuids"
    STRUCT_ARRAY = "an array of structs"


@dataclass(frozen=True, kw_only=True)
class StepView:
    """What every step has: the field it reads and writes."""

    step: ClassVar[Step]
    attr: str
    annotation: str = ""
    """The field's type (MYPYC flavour: the local a value is read into is declared)."""
    null_check: bool = False
    """The field is nullable in other versions, not here: None is refused by name."""


@dataclass(frozen=True, kw_only=True)
class FixedRunStep(StepView):
    step = Step.FIXED_RUN
    attrs: tuple[str, ...]
    format: str
    """The struct format letters (without ``>``)."""
    size: int
    members: tuple[tuple[str, str, int], ...]
    """``(attr, wire type, offset in the run)`` of each field."""

    @property
    def targets(self) -> list[str]:
        return [f"obj.{attr}" for attr in self.attrs]

    @property
    def pack_call(self) -> Call:
        return Call(f"_pack_{self.format}", tuple(Code(name) for name in self.targets))


@dataclass(frozen=True, kw_only=True)
class BoolStep(StepView):
    step = Step.BOOL


@dataclass(frozen=True, kw_only=True)
class StringStep(StepView):
    step = Step.STRING
    reader: str
    """The ``_read`` helper (the MYPYC flavour reads inline and calls it for the rare
    long lengths and nulls)."""
    writer: str
    nullable: bool
    compact: bool
    kind: str
    """``string`` or ``bytes``."""
    width: int
    """The bytes of a classic length: 2 for a string, 4 for bytes."""


@dataclass(frozen=True, kw_only=True)
class UuidStep(StepView):
    step = Step.UUID


@dataclass(frozen=True, kw_only=True)
class StructStep(StepView):
    step = Step.STRUCT
    reader: str
    writer: str
    nullable: bool
    tagged_elsewhere: bool
    """Tagged in other versions: None stands for its default here."""
    empty_const: str


@dataclass(frozen=True, kw_only=True)
class FixedArrayStep(StepView):
    step = Step.FIXED_ARRAY
    reader: str
    """The ``_read`` helper: the whole array (pure), or long counts (MYPYC)."""
    writer: str
    items: str
    """The ``FixedItems`` of ``_read`` (pure flavour)."""
    packer: str
    """The ``FixedPacker`` of ``_write``."""
    nullable: bool
    compact: bool
    wire: str
    """The items' wire type."""
    item_size: int


@dataclass(frozen=True)
class FixedStructs:
    """An array of structs whose every field has a fixed size: read with one
    ``iter_unpack`` over the whole array (a flexible item ends in its tag-section byte,
    which must be 0 there; anything else is left to the checked reader)."""

    class_name: str
    format: str
    size: int
    targets: tuple[str, ...]
    """``item.a``, ``item.b``, ... (and ``tags`` for the tag-section byte)."""
    defaults: tuple[tuple[str, Default, str, str], ...]


@dataclass(frozen=True, kw_only=True)
class ArrayStep(StepView):
    """An array of strings, bytes or uuids (``element_writer`` empty: uuids)."""

    step = Step.ARRAY
    count_reader: str
    count_writer: str
    element_reader: str
    element_writer: str
    nullable: bool
    compact: bool


@dataclass(frozen=True, kw_only=True)
class StructArrayStep(ArrayStep):
    """An array of structs: items read and written by the child's functions."""

    step = Step.STRUCT_ARRAY
    zero_size_items: bool
    """Items may take no bytes: the count must be checked against what is left."""
    fixed_structs: FixedStructs | None
    """Items read in bulk (pure flavour), where they all have a fixed size."""


@dataclass(kw_only=True)
class StepBuilder:
    """Builds the steps of readers and writers, and records what they need of the
    module: imports, struct formats, and which empty instances are compared against."""

    flavour: Flavour = Flavour.PURE
    imports: ModuleImports = field(default_factory=ModuleImports)
    formats: set[str] = field(default_factory=set)
    unpacks: set[str] = field(default_factory=set)
    packs: set[str] = field(default_factory=set)
    iter_unpacks: set[str] = field(default_factory=set)
    default_consts: set[str] = field(default_factory=set)

    def steps(self, mp: MessagePlans, regular: tuple[FieldPlan, ...]) -> tuple[StepView, ...]:
        """Regular fields in wire order; each run of fixed-size fields (even of one) is one
        call of a module-level bound ``struct`` method."""
        steps: list[StepView] = []
        run: list[FieldPlan] = []

        def flush() -> None:
            if run:
                steps.append(self.fixed_run(run))
            run.clear()

        for fp in regular:
            wire = WIRE_TYPES.get(fp.field.type.text)
            # Bools stay out of runs: they are written through a checked lookup.
            if wire is not None and wire.fixed and wire.name != "bool":
                run.append(fp)
                continue
            flush()
            steps.append(self.step(mp, fp))
        flush()
        return tuple(steps)

    def fixed_run(self, run: list[FieldPlan]) -> FixedRunStep:
        wires = [WIRE_TYPES[fp.field.type.text] for fp in run]
        fmt = "".join(w.struct_code or "" for w in wires)
        offsets = [sum(w.size for w in wires[:i]) for i in range(len(wires))]
        self.formats.add(fmt)
        self.packs.add(fmt)
        if self.flavour is Flavour.MYPYC:
            for w in wires:
                if w.native_import:
                    self.imports.use("librt.strings", w.native_import)
        else:
            self.unpacks.add(fmt)
        return FixedRunStep(
            attr=run[0].field.attr,
            attrs=tuple(fp.field.attr for fp in run),
            format=fmt,
            size=sum(w.size for w in wires),
            members=tuple(
                (fp.field.attr, w.name, offset) for fp, w, offset in zip(run, wires, offsets)
            ),
        )

    def step(self, mp: MessagePlans, fp: FieldPlan) -> StepView:
        f = fp.field
        python = (
            mp.message.class_name(f.struct)
            if f.struct is not None
            else WIRE_TYPES[(f.type.element or f.type).text].python
        )
        view = replace(self.value_step(mp, fp), annotation=field_annotation(f, python))
        tagged_elsewhere = isinstance(view, StructStep) and view.tagged_elsewhere
        if is_nullable_anywhere(f) and not fp.nullable and not tagged_elsewhere:
            self.imports.use("._write", "null_field")
            return replace(view, null_check=True)
        return view

    def value_step(self, mp: MessagePlans, fp: FieldPlan) -> StepView:
        f = fp.field
        ftype = f.type
        if ftype.text == "bool":
            self.imports.use("._write", "BOOL_BYTES")
            return BoolStep(attr=f.attr)
        if ftype.text in ("string", "bytes", "records"):
            return self.string_step(fp)
        if ftype.text == "uuid":
            self.imports.use("._read", "read_uuid")
            return UuidStep(attr=f.attr)
        if ftype.is_struct:
            assert fp.child is not None
            tagged_elsewhere = absent_is_none(f)
            empty = default_const(mp.message.class_name(f.struct)) if f.struct else ""
            if tagged_elsewhere:
                self.default_consts.add(empty)
            return StructStep(
                attr=f.attr,
                reader=reader_name(fp.child.function),
                writer=writer_name(fp.child.function),
                nullable=fp.nullable,
                tagged_elsewhere=tagged_elsewhere,
                empty_const=empty,
            )
        element = ftype.element
        assert element is not None
        wire = WIRE_TYPES.get(element.text)
        if wire is not None and wire.fixed:
            return self.fixed_array_step(fp)
        count_reader, count_writer = LENGTH_HELPERS["count", fp.compact, fp.nullable]
        self.imports.use("._read", count_reader)
        self.imports.use("._write", count_writer)
        if element.is_struct:
            assert fp.child is not None
            return StructArrayStep(
                attr=f.attr,
                count_reader=count_reader,
                count_writer=count_writer,
                element_reader=reader_name(fp.child.function),
                element_writer=writer_name(fp.child.function),
                nullable=fp.nullable,
                compact=fp.compact,
                zero_size_items=self.zero_size(fp.child),
                # mypyc calls a child reader natively: no need to read items in bulk
                fixed_structs=(
                    self.fixed_structs(mp, fp.child) if self.flavour is Flavour.PURE else None
                ),
            )
        if element.text == "uuid":
            self.imports.use("._read", "read_uuid")
            element_reader, element_writer = "read_uuid", ""
        else:
            kind = "string" if element.text == "string" else "bytes"
            element_reader, element_writer = LENGTH_HELPERS[kind, fp.compact, False]
            self.imports.use("._read", element_reader)
            self.imports.use("._write", element_writer)
        return ArrayStep(
            attr=f.attr,
            count_reader=count_reader,
            count_writer=count_writer,
            element_reader=element_reader,
            element_writer=element_writer,
            nullable=fp.nullable,
            compact=fp.compact,
        )

    def string_step(self, fp: FieldPlan) -> StringStep:
        kind = "string" if fp.field.type.text == "string" else "bytes"
        reader, writer = LENGTH_HELPERS[kind, fp.compact, fp.nullable]
        if self.flavour is Flavour.MYPYC:
            # Read inline (see the template); the helper takes the rare long lengths.
            self.imports.use("._read", "fail")
            if not fp.compact:
                self.imports.use(
                    "librt.strings", "read_i16_be" if kind == "string" else "read_i32_be"
                )
        return StringStep(
            attr=fp.field.attr,
            reader=self.imports.use("._read", reader),
            writer=self.imports.use("._write", writer),
            nullable=fp.nullable,
            compact=fp.compact,
            kind=kind,
            width=2 if kind == "string" else 4,
        )

    def fixed_array_step(self, fp: FieldPlan) -> FixedArrayStep:
        element = fp.field.type.element
        assert element is not None
        wire = WIRE_TYPES[element.text]
        assert wire.items is not None and wire.packer is not None
        array_reader, writer = LENGTH_HELPERS["fixed_array", fp.compact, fp.nullable]
        if self.flavour is Flavour.MYPYC:
            # Read item by item with librt (see the template): counts and fail only.
            reader = self.imports.use("._read", LENGTH_HELPERS["count", fp.compact, fp.nullable][0])
            self.imports.use("._read", "fail")
            if wire.native_import:
                self.imports.use("librt.strings", wire.native_import)
            if not fp.compact:
                self.imports.use("librt.strings", "read_i32_be")
            items = ""
        else:
            reader = self.imports.use("._read", array_reader)
            items = self.imports.use("._read", wire.items)
        return FixedArrayStep(
            attr=fp.field.attr,
            reader=reader,
            writer=self.imports.use("._write", writer),
            items=items,
            packer=self.imports.use("._write", wire.packer),
            nullable=fp.nullable,
            compact=fp.compact,
            wire=wire.name,
            item_size=wire.size,
        )

    def zero_size(self, child: StructPlan) -> bool:
        if min_struct_size(child) > 0:
            return False
        self.imports.use("._read", "fail")
        return True

    def fixed_structs(self, mp: MessagePlans, child: StructPlan) -> FixedStructs | None:
        """How to read an array of ``child`` with one ``iter_unpack``, if every field of
        it has a fixed size here."""
        if child.tagged or not child.regular:
            return None
        wires = [WIRE_TYPES.get(fp.field.type.text) for fp in child.regular]
        if not all(w is not None and w.fixed for w in wires):
            return None
        fmt = "".join(w.struct_code or "" for w in wires if w is not None)
        targets = [f"item.{fp.field.attr}" for fp in child.regular]
        if child.flexible:
            fmt += "B"
            targets.append("tags")
        self.iter_unpacks.add(fmt)
        self.imports.use("._read", "fail")
        return FixedStructs(
            class_name=mp.message.class_name(child.struct),
            format=fmt,
            size=sum(w.size for w in wires if w is not None) + (1 if child.flexible else 0),
            targets=tuple(targets),
            defaults=self.reader_defaults(mp, child),
        )

    # --- what a reader sets that is not on the wire -------------------------------------

    def reader_defaults(
        self, mp: MessagePlans, plan: StructPlan
    ) -> tuple[tuple[str, Default, str, str], ...]:
        """``(attr, default, literal, struct class)`` of every attribute a reader of
        ``plan`` sets before reading: the fields not on the wire, the tag bookkeeping."""
        message = mp.message
        versions = mp.struct_versions.get(plan.struct.name, {})
        on_wire = {fp.field.name for fp in plan.regular}
        defaults = []
        for f in plan.struct.fields:
            if f.name not in on_wire:
                default, literal = self.default(f, struct_class(message, f))
                defaults.append((f.attr, default, literal, struct_class(message, f)))
        if any(p.flexible for p in versions.values()):
            defaults.append(("unknown_tagged_fields", Default.EMPTY_ARRAY, "()", ""))
        if any(p.tagged for p in versions.values()):
            defaults.append(("tags_on_wire", Default.VALUE, "NO_TAGS", ""))
        return tuple(defaults)

    def default(self, f: Field, class_name: str) -> tuple[Default, str]:
        """What a field holds when nobody set it, and that value as an expression."""
        value = f.default
        if value is None or absent_is_none(f):
            return Default.NONE, "None"
        if isinstance(value, list):
            return Default.EMPTY_ARRAY, "()"
        if value is EMPTY_STRUCT:
            return Default.STRUCT, default_const(class_name)
        if isinstance(value, uuid.UUID):
            if value.int == 0:
                return Default.VALUE, self.imports.use("._read", "ZERO_UUID")
            self.imports.use("uuid", "UUID")
            return Default.VALUE, f"UUID({pystr(str(value))})"
        return Default.VALUE, pylit(value)


def min_size(type_text: str, compact: bool, child: StructPlan | None) -> int:
    """The fewest bytes one non-null value of this type takes (a bound for count checks)."""
    wire = WIRE_TYPES.get(type_text)
    if wire is not None:
        return wire.min_size(compact)
    if type_text.startswith("[]"):
        return ARRAY_MIN_SIZE[compact]
    assert child is not None, type_text
    return min_struct_size(child)


def min_struct_size(plan: StructPlan) -> int:
    size = sum(
        1 if fp.nullable else min_size(fp.field.type.text, fp.compact, fp.child)
        for fp in plan.regular
    )
    return size + (1 if plan.flexible else 0)
