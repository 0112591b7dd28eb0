"""Builds the typed views of one module (``views``) from the plans of its messages."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .docstrings import field_doc, message_doc, struct_doc
from .layout import Call, Code, Kwarg, Tup, flat
from .model import Field, Message, Struct
from .plan import FieldPlan, MessagePlans, StructPlan
from .steps import StepBuilder
from .view_kit import (
    Default,
    Flavour,
    absent_is_none,
    default_const,
    field_annotation,
    is_nullable_anywhere,
    reader_name,
    struct_class,
    writer_name,
)
from .views import ClassView, FieldView, GuardView, MessageFacts, ModuleView, PlanView, Store
from .wiretypes import WIRE_TYPES


@dataclass(kw_only=True)
class ModuleBuilder(StepBuilder):
    """Builds the ``ModuleView`` of one module from the plans of its messages: its
    classes, and a reader, a writer and a table per plan."""

    plans: list[MessagePlans]

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
            facts = MessageFacts(
                api_key=message.api_key,
                min_version=message.valid_versions.lo,
                max_version=message.valid_versions.hi,
                flexible_min=message.flexible_min,
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
            reader=reader_name(plan.function),
            writer=writer_name(plan.function),
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

    def guard(self, message: Message, f: Field) -> GuardView:
        self.imports.use("._write", "absent_field")
        default, literal = self.default(f, struct_class(message, f))
        if default is Default.STRUCT:
            self.default_consts.add(literal)
        return GuardView(
            attr=f.attr,
            default=default,
            literal=literal,
            nullable_array=f.type.is_array and is_nullable_anywhere(f),
        )


# --- the tables a module binds ---------------------------------------------------------


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
        Code(reader_name(plan.function)),
        Code(writer_name(plan.function)),
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
