"""Typed views: what the module template needs to know, worked out from models and plans.

The template writes every character of code; these frozen records decide everything it
branches on (an enum per choice, no dicts), and ``ModuleImports`` collects each name the
code will use while the views are built, so a module imports exactly what it needs.
"""

from __future__ import annotations

import enum
import math
import uuid
from dataclasses import dataclass, field, replace

from .layout import Call, Code, Kwarg, Tup, flat, pybytes, pystr
from .model import EMPTY_STRUCT, Field, Message, Struct, snake_case
from .plan import FieldPlan, MessagePlans, StructPlan
from .versions import version_ranges
from .wiretypes import ARRAY_MIN_SIZE, WIRE_TYPES


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


class Step(enum.Enum):
    """One step of a reader or writer."""

    FIXED_RUN = "a run of fixed-size fields, one struct call"
    BOOL = "a bool"
    STRING = "a string or bytes field (helper functions)"
    UUID = "a uuid"
    STRUCT = "a struct"
    FIXED_ARRAY = "an array of fixed-size items, one struct call"
    ARRAY = "an array of strings, bytes or uuids"
    STRUCT_ARRAY = "an array of structs"


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


@dataclass(frozen=True)
class StepView:
    step: Step
    attrs: tuple[str, ...]
    """The field (one) or the run of fields (FIXED_RUN)."""
    format: str = ""
    """FIXED_RUN: the struct format letters (without ``>``)."""
    size: int = 0
    members: tuple[tuple[str, str, int], ...] = ()
    """FIXED_RUN: ``(attr, wire type, offset in the run)`` of each field."""
    reader: str = ""
    """A helper of ``_read`` (strings, counts, fixed arrays), or a child reader."""
    writer: str = ""
    """A helper of ``_write``, or a child writer."""
    element_reader: str = ""
    element_writer: str = ""
    items: str = ""
    """FIXED_ARRAY: the ``FixedItems`` of ``_read``; ``packer``: the ``FixedPacker``."""
    packer: str = ""
    nullable: bool = False
    compact: bool = False
    tagged_elsewhere: bool = False
    """A struct field tagged in other versions: None stands for its default here."""
    empty_const: str = ""
    zero_size_items: bool = False
    """Array items may take no bytes: the count must be checked against what is left."""
    null_check: bool = False
    """The field is nullable in other versions, not here: None is refused by name."""
    fixed_structs: FixedStructs | None = None
    annotation: str = ""
    """The field's type (MYPYC flavour: the local a value is read into is declared)."""

    @property
    def attr(self) -> str:
        return self.attrs[0]

    @property
    def targets(self) -> list[str]:
        return [f"obj.{attr}" for attr in self.attrs]

    @property
    def pack_call(self) -> Call:
        return Call(f"_pack_{self.format}", tuple(Code(name) for name in self.targets))


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


@dataclass
class ModuleBuilder:
    """Builds the ``ModuleView`` of one module from the plans of its messages."""

    plans: list[MessagePlans]
    flavour: Flavour = Flavour.PURE
    imports: ModuleImports = field(default_factory=ModuleImports)
    formats: set[str] = field(default_factory=set)
    unpacks: set[str] = field(default_factory=set)
    packs: set[str] = field(default_factory=set)
    iter_unpacks: set[str] = field(default_factory=set)
    default_consts: set[str] = field(default_factory=set)

    def build(self, header: str, doc: str) -> ModuleView:
        # Leaves first, each message after its structs: a class exists before a default
        # (or a constant) uses it.
        classes = tuple(
            self.class_view(mp, struct)
            for mp in self.plans
            for struct in (*mp.message.structs, mp.message.root)
        )
        plans = tuple(self.plan_view(mp, plan) for mp in self.plans for plan in mp.plans)
        self.imports.use("dataclasses", "dataclass")
        self.imports.use("._codec", "bind")
        self.imports.use("._plan", "Plan")
        if self.formats or self.iter_unpacks:
            self.imports.use("struct", "struct")
        # A class's empty instance is emitted only where something compares against it.
        classes = tuple(
            c if c.default_const in self.default_consts else replace(c, default_const="")
            for c in classes
        )
        if any(c.default_const for c in classes):
            self.imports.annotate("typing", "Final")
        return ModuleView(
            header=header,
            doc=doc,
            imports=self.imports,
            formats=tuple(sorted(self.formats)),
            unpacks=frozenset(self.unpacks),
            packs=frozenset(self.packs),
            iter_unpacks=tuple(sorted(self.iter_unpacks)),
            classes=classes,
            plans=plans,
            native=self.flavour is Flavour.MYPYC,
            response_links=tuple(
                (c.class_name, c.facts.response_class)
                for c in classes
                if c.facts is not None and c.facts.response_class is not None
            ),
        )

    # --- classes -----------------------------------------------------------------------

    def class_view(self, mp: MessagePlans, struct: Struct) -> ClassView:
        message = mp.message
        is_message = struct is message.root
        versions = mp.struct_versions.get(struct.name, {})
        known_tags = any(plan.tagged for plan in versions.values())
        flexible = any(plan.flexible for plan in versions.values())
        self.imports.use("._codec", "Struct")
        if flexible:
            self.imports.annotate("._plan", "RawTaggedField")
            self.imports.annotate("collections.abc", "Iterable")
            self.imports.use("._codec", "as_tuple")
        if known_tags:
            self.imports.use("._plan", "NO_TAGS")
            self.imports.use("dataclasses", "field")
        facts = None
        if is_message:
            self.imports.annotate("typing", "ClassVar")
            flexible_versions = message.flexible_versions.intersect(message.valid_versions)
            facts = MessageFacts(
                api_key=message.api_key,
                min_version=message.valid_versions.lo,
                max_version=message.valid_versions.hi,
                flexible_min=None if flexible_versions.empty else flexible_versions.lo,
                latest_version_unstable=message.latest_version_unstable,
                response_class=self.response_class(message),
            )
        fields = tuple(self.field_view(message, f) for f in struct.fields)
        class_name = message.class_name(struct)
        structs = tuple(
            Code(message.class_name(f.struct)) for f in struct.fields if f.struct is not None
        )
        binding = Call(
            "bind",
            (
                Code(class_name),
                Tup(tuple(json_field(f) for f in struct.fields)),
                Tup(
                    tuple(Tup((lo, hi, Code(plan_const(plan)))) for lo, hi, plan in runs(versions))
                ),
                *((Kwarg("structs", Tup(structs)),) if structs else ()),
                *((Code("flexible=True"),) if flexible else ()),
            ),
            explode=True,
        )
        return ClassView(
            class_name=class_name,
            doc=message_doc(message) if is_message else struct_doc(struct, versions),
            facts=facts,
            fields=fields,
            has_unknown_tags=flexible,
            has_known_tags=known_tags,
            binding=binding,
            default_const=default_const(class_name),
        )

    def response_class(self, message: Message) -> str | None:
        if message.type != "request":
            return None
        for mp in self.plans:
            other = mp.message
            if other.type == "response" and other.api_key == message.api_key:
                return other.class_name(other.root)
        return None

    def field_view(self, message: Message, f: Field) -> FieldView:
        element = f.type.element or f.type
        struct_class = message.class_name(f.struct) if f.struct is not None else ""
        if f.struct is not None:
            python = struct_class
        else:
            python = WIRE_TYPES[element.text].python
            if python == "UUID":
                self.imports.use("uuid", "UUID")
        tagged_struct = absent_is_none(f)
        nullable = is_nullable_anywhere(f) or tagged_struct
        annotation = field_annotation(f, python)
        param = f"Iterable[{python}]" if f.type.is_array else python
        if f.type.is_array:
            self.imports.annotate("collections.abc", "Iterable")
        if nullable:
            param += " | None"
        default, literal = self.default(f, struct_class)
        empty = ""
        if f.type.is_struct:
            empty = default_const(struct_class)
        if f.type.is_array:
            store = Store.TUPLE
            self.imports.use("._codec", "as_tuple")
        elif tagged_struct:
            store = Store.TAGGED_STRUCT
            self.default_consts.add(empty)
        elif default is Default.STRUCT:
            store = Store.FRESH_STRUCT
            self.default_consts.add(empty)
        else:
            store = Store.AS_IS
        return FieldView(
            attr=f.attr,
            annotation=annotation,
            param=param,
            default=default,
            literal=literal,
            store=store,
            struct_class=struct_class,
            doc=field_doc(f),
            empty_const=empty,
        )

    def default(self, f: Field, struct_class: str) -> tuple[Default, str]:
        value = f.default
        if value is None or absent_is_none(f):
            return Default.NONE, "None"
        if isinstance(value, list):
            return Default.EMPTY_ARRAY, "()"
        if value is EMPTY_STRUCT:
            return Default.STRUCT, default_const(struct_class)
        if isinstance(value, uuid.UUID):
            if value.int == 0:
                return Default.VALUE, self.imports.use("._read", "ZERO_UUID")
            self.imports.use("uuid", "UUID")
            return Default.VALUE, f"UUID({pystr(str(value))})"
        return Default.VALUE, pylit(value)

    # --- plans -------------------------------------------------------------------------

    def plan_view(self, mp: MessagePlans, plan: StructPlan) -> PlanView:
        message = mp.message
        versions = mp.struct_versions.get(plan.struct.name, {})
        class_flexible = any(p.flexible for p in versions.values())
        defaults = self.reader_defaults(mp, plan)
        if plan.flexible:
            if plan.tagged:
                self.imports.use("._read", "read_tags")
                self.imports.use("._write", "write_tags")
            else:
                self.imports.use("._read", "read_tags")
                self.imports.use("._write", "write_unknown_tags")
        guards = tuple(self.guard(message, f) for f in plan.guarded)
        refuse = class_flexible and not plan.flexible
        if refuse:
            self.imports.use("._write", "tags_in_plain_version")
        return PlanView(
            const=plan_const(plan),
            function=plan.function,
            class_name=message.class_name(plan.struct),
            struct_name=plan.struct.name,
            version_label=plan.version_label,
            plural=len(plan.versions) > 1,
            flexible=plan.flexible,
            has_tagged=bool(plan.tagged),
            defaults=tuple(defaults),
            steps=self.steps(mp, plan.regular),
            guards=guards,
            refuse_unknown_tags=refuse,
            table=plan_table(message, plan),
            constructor_args=self.constructor_args(plan, defaults),
        )

    def constructor_args(
        self, plan: StructPlan, defaults: tuple[tuple[str, Default, str, str], ...]
    ) -> tuple[str, ...]:
        """MYPYC flavour: the arguments of the reader's constructor call, in parameter
        order: the value read for a field on the wire, the default of any other (a struct
        default is its class's empty instance, which the constructor replaces by a fresh
        one), ``()`` for the unknown tagged fields."""
        if self.flavour is not Flavour.MYPYC:
            return ()
        absent = {attr: (default, literal) for attr, default, literal, _ in defaults}
        args = []
        for f in plan.struct.fields:
            if f.attr not in absent:
                args.append(f"v_{f.attr}")
                continue
            default, literal = absent[f.attr]
            if default is Default.STRUCT:
                self.default_consts.add(literal)  # the constructor compares against it
            args.append(literal)
        if "unknown_tagged_fields" in absent:
            args.append("()")
        return tuple(args)

    def zero_size(self, child: StructPlan) -> bool:
        if min_struct_size(child) > 0:
            return False
        self.imports.use("._read", "fail")
        return True

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
                default, literal = self.default(f, _struct_class(message, f))
                defaults.append((f.attr, default, literal, _struct_class(message, f)))
        if any(p.flexible for p in versions.values()):
            defaults.append(("unknown_tagged_fields", Default.EMPTY_ARRAY, "()", ""))
        if any(p.tagged for p in versions.values()):
            defaults.append(("tags_on_wire", Default.VALUE, "NO_TAGS", ""))
        return tuple(defaults)

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

    def guard(self, message: Message, f: Field) -> GuardView:
        self.imports.use("._write", "absent_field")
        default, literal = self.default(f, _struct_class(message, f))
        if default is Default.STRUCT:
            self.default_consts.add(literal)
        return GuardView(
            attr=f.attr,
            default=default,
            literal=literal,
            nullable_array=f.type.is_array and is_nullable_anywhere(f),
        )

    def steps(self, mp: MessagePlans, regular: tuple[FieldPlan, ...]) -> tuple[StepView, ...]:
        """Regular fields in wire order; each run of fixed-size fields (even of one) is one
        call of a module-level bound ``struct`` method."""
        steps: list[StepView] = []
        run: list[FieldPlan] = []

        def flush() -> None:
            if run:
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
                steps.append(
                    StepView(
                        Step.FIXED_RUN,
                        tuple(fp.field.attr for fp in run),
                        format=fmt,
                        size=sum(w.size for w in wires),
                        members=tuple(
                            (fp.field.attr, w.name, offset)
                            for fp, w, offset in zip(run, wires, offsets)
                        ),
                    )
                )
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

    def step(self, mp: MessagePlans, fp: FieldPlan) -> StepView:
        f = fp.field
        python = (
            mp.message.class_name(f.struct)
            if f.struct is not None
            else WIRE_TYPES[(f.type.element or f.type).text].python
        )
        view = replace(self.value_step(mp, fp), annotation=field_annotation(f, python))
        if is_nullable_anywhere(fp.field) and not fp.nullable and not view.tagged_elsewhere:
            self.imports.use("._write", "null_field")
            return replace(view, null_check=True)
        return view

    def value_step(self, mp: MessagePlans, fp: FieldPlan) -> StepView:
        message = mp.message
        f = fp.field
        ftype = f.type
        compact = "compact_" if fp.compact else ""
        nullable = "nullable_" if fp.nullable else ""
        if ftype.text == "bool":
            self.imports.use("._write", "BOOL_BYTES")
            return StepView(Step.BOOL, (f.attr,))
        if ftype.text in ("string", "bytes", "records"):
            kind = "string" if ftype.text == "string" else "bytes"
            if self.flavour is Flavour.MYPYC:
                # Read inline (see the template); the helper takes the rare long lengths.
                self.imports.use("._read", "fail")
                if not fp.compact:
                    self.imports.use(
                        "librt.strings", "read_i16_be" if kind == "string" else "read_i32_be"
                    )
            return StepView(
                Step.STRING,
                (f.attr,),
                reader=self.imports.use("._read", f"read_{compact}{nullable}{kind}"),
                writer=self.imports.use("._write", f"write_{compact}{nullable}{kind}"),
                nullable=fp.nullable,
                compact=fp.compact,
                members=((f.attr, kind, 2 if kind == "string" else 4),),
            )
        if ftype.text == "uuid":
            self.imports.use("._read", "read_uuid")
            return StepView(Step.UUID, (f.attr,))
        if ftype.is_struct:
            assert fp.child is not None
            tagged_elsewhere = absent_is_none(f)
            empty = default_const(message.class_name(f.struct)) if f.struct else ""
            if tagged_elsewhere:
                self.default_consts.add(empty)
            return StepView(
                Step.STRUCT,
                (f.attr,),
                reader=f"_read_{fp.child.function}",
                writer=f"_write_{fp.child.function}",
                nullable=fp.nullable,
                tagged_elsewhere=tagged_elsewhere,
                empty_const=empty,
            )
        element = ftype.element
        assert element is not None
        wire = WIRE_TYPES.get(element.text)
        if wire is not None and wire.fixed:
            if self.flavour is Flavour.MYPYC:
                # Read item by item with librt (see the template): counts and fail only.
                reader = self.imports.use("._read", f"read_{compact}{nullable}count")
                self.imports.use("._read", "fail")
                if wire.native_import:
                    self.imports.use("librt.strings", wire.native_import)
                if not fp.compact:
                    self.imports.use("librt.strings", "read_i32_be")
                items = ""
            else:
                reader = self.imports.use("._read", f"read_{compact}{nullable}fixed_array")
                items = self.imports.use("._read", str(wire.items))
            return StepView(
                Step.FIXED_ARRAY,
                (f.attr,),
                reader=reader,
                writer=self.imports.use("._write", f"write_{compact}fixed_array"),
                items=items,
                packer=self.imports.use("._write", f"PACK_{wire.items}"),
                nullable=fp.nullable,
                compact=fp.compact,
                members=((f.attr, wire.name, wire.size),),
            )
        counter = self.imports.use("._read", f"read_{compact}{nullable}count")
        self.imports.use("._write", f"write_{compact}count")
        if element.is_struct:
            assert fp.child is not None
            return StepView(
                Step.STRUCT_ARRAY,
                (f.attr,),
                reader=counter,
                element_reader=f"_read_{fp.child.function}",
                element_writer=f"_write_{fp.child.function}",
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
            element_reader = self.imports.use("._read", f"read_{compact}{kind}")
            element_writer = self.imports.use("._write", f"write_{compact}{kind}")
        return StepView(
            Step.ARRAY,
            (f.attr,),
            reader=counter,
            element_reader=element_reader,
            element_writer=element_writer,
            nullable=fp.nullable,
            compact=fp.compact,
        )


def _struct_class(message: Message, f: Field) -> str:
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


def json_field(f: Field) -> str:
    """``attr`` or ``attr:kind``: one entry of a class's field table for ``_json``."""
    element = f.type.element or f.type
    kind = "struct" if element.is_struct else WIRE_TYPES[element.text].json
    kind = ("[]" if f.type.is_array else "") + kind
    return f.attr if kind == "value" else f"{f.attr}:{kind}"


def runs(versions: dict[int, StructPlan]) -> list[tuple[int, int, StructPlan]]:
    """``(first, last, plan)`` for each run of consecutive versions sharing a plan."""
    result: list[tuple[int, int, StructPlan]] = []
    for version, plan in sorted(versions.items()):
        if result and result[-1][2] is plan and result[-1][1] == version - 1:
            result[-1] = (result[-1][0], version, plan)
        else:
            result.append((version, version, plan))
    return result


def plan_table(message: Message, plan: StructPlan) -> Call:
    """``Plan(cls, reader, writer, ("attr:kind", ...), tagged=..., children=...)``."""
    args: list[object] = [
        Code(message.class_name(plan.struct)),
        Code(f"_read_{plan.function}"),
        Code(f"_write_{plan.function}"),
    ]
    if plan.regular:
        args.append(Tup(tuple(f"{fp.field.attr}:{wire_kind(fp)}" for fp in plan.regular)))
    if plan.tagged:
        entries = tuple(f"{fp.field.tag}:{fp.field.attr}:{wire_kind(fp)}" for fp in plan.tagged)
        args.append(Kwarg("tagged", Tup(entries)))
    children = [fp.child for fp in (*plan.regular, *plan.tagged) if fp.child is not None]
    if children:
        args.append(Kwarg("children", Tup(tuple(Code(plan_const(c)) for c in children))))
    if not plan.flexible:
        args.append(Code("flexible=False"))
    if plan.invalid_tags:
        args.append(Code(f"invalid_tags={flat(Tup(plan.invalid_tags))}"))
    return Call("Plan", tuple(args))


def plan_const(plan: StructPlan) -> str:
    return f"_{plan.function.upper()}"


def absent_is_none(f: Field) -> bool:
    """A tagged struct field whose absence is None: no default struct is built per decode.
    Not so for a nullable one with a struct default, where None is a value of its own (a
    null marker on the wire) and absence means the default struct, as in Kafka."""
    if f.tag is None or not f.type.is_struct or not f.tagged_versions.intersect(f.versions):
        return False
    return not f.nullable_versions.intersect(f.tagged_versions) or f.default is None


def is_nullable_anywhere(f: Field) -> bool:
    return bool(f.nullable_versions.intersect(f.versions)) or f.default is None


def wire_kind(fp: FieldPlan) -> str:
    """The plan table's kind string: ``[c][[]]type[?]`` (see the runtime's ``_plan``)."""
    ftype = fp.field.type
    element = ftype.element or ftype
    name = "struct" if element.is_struct else element.text
    # Only lengths and counts have a compact form; fixed-size values and structs do not.
    has_length = ftype.is_array or name in ("string", "bytes", "records")
    return (
        ("c" if fp.compact and has_length else "")
        + ("[]" if ftype.is_array else "")
        + name
        + ("?" if fp.nullable else "")
    )


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


# --- docstrings ------------------------------------------------------------------------


def version_facts(f: Field) -> str:
    facts = [f"Versions: {f.versions}."]
    if f.nullable_versions.intersect(f.versions):
        facts.append(f"Nullable: {f.nullable_versions.intersect(f.versions)}.")
    if f.tag is not None:
        facts.append(f"Tagged: {f.tagged_versions} (tag {f.tag}).")
    if f.ignorable:
        facts.append("Ignorable.")
    if f.map_key:
        facts.append("Map key.")
    if f.entity_type and f.entity_type != "unknown":
        facts.append(f"Entity: {f.entity_type}.")
    return " ".join(facts)


def field_doc(f: Field) -> str:
    about = f.about.strip()
    return f"{about}\n\n{version_facts(f)}" if about else version_facts(f)


def struct_doc(struct: Struct, versions: dict[int, StructPlan]) -> str:
    about = struct.about.strip()
    label = version_ranges(sorted(versions)) if versions else "none"
    facts = f"Occurs in versions: {label}."
    return f"{about}\n\n{facts}" if about else f"Struct {struct.name}.\n\n{facts}"


def message_doc(message: Message) -> str:
    flexible = message.flexible_versions.intersect(message.valid_versions)
    if message.api_key is not None and message.type in ("request", "response"):
        title = f"The {message.type} of {message.api_name} (api key {message.api_key})."
    elif message.type == "header":
        title = f"The {message.name[: -len('Header')].lower()} header."
    else:
        title = f"{message.name}: a {message.type} record" + (
            f" (api key {message.api_key})." if message.api_key is not None else "."
        )
    facts = [
        f"Valid versions: {message.valid_versions}.",
        f"Flexible versions: {flexible if flexible else 'none'}.",
    ]
    if message.deprecated_versions:
        facts.append(f"Deprecated versions: {message.deprecated_versions}.")
    if message.latest_version_unstable:
        facts.append(f"Version {message.valid_versions.hi} is unstable upstream.")
    notes = f"{message.notes}\n\n" if message.notes else ""
    return f"{title}\n\n{notes}" + " ".join(facts) + f"\n\nSpec: {message.source}"
