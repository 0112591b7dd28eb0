"""Per-version wire plans: what the encoder and decoder of a struct do at one version.

A plan lists, for one struct at one version, the fields on the wire in order, how each
is encoded there (classic or compact, nullable or not), the tagged fields in tag order,
and the fields whose absence must be guarded. Versions whose plans are equal share one
generated function, so every version test is settled here, at generation time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Field, Message, Struct, snake_case
from .versions import version_ranges


@dataclass(frozen=True)
class FieldPlan:
    """One field as it appears on the wire at the plan's versions."""

    field: Field
    compact: bool
    nullable: bool
    child: StructPlan | None
    """The plan of the struct (or array element struct) at the same version."""


@dataclass(eq=False)
class StructPlan:
    struct: Struct
    function: str
    """Stem of the generated function names, e.g. ``metadata_request_topic_v4``."""
    flexible: bool
    regular: tuple[FieldPlan, ...]
    tagged: tuple[FieldPlan, ...]
    guarded: tuple[Field, ...]
    """Fields absent at these versions that must hold their default to be written."""
    invalid_tags: tuple[int, ...]
    """Tags of known fields that are not tagged at these versions (an error on read)."""
    versions: list[int] = field(default_factory=list)

    @property
    def version_label(self) -> str:
        return version_ranges(self.versions)


@dataclass(frozen=True)
class MessagePlans:
    """Every plan of one message: the root's per version, and all nested ones."""

    message: Message
    root: dict[int, StructPlan]
    plans: tuple[StructPlan, ...]
    """Every distinct plan, children before their parents."""
    struct_versions: dict[str, dict[int, StructPlan]]
    """Struct name -> version -> plan, for the struct's own encode/decode methods."""


class Planner:
    def __init__(self, message: Message) -> None:
        self.message = message
        self.by_key: dict[tuple[object, ...], StructPlan] = {}
        self.ordered: list[StructPlan] = []
        self.struct_versions: dict[str, dict[int, StructPlan]] = {}
        self.stems = self.function_stems()

    def function_stems(self) -> dict[str, str]:
        """Function-name stems per struct: its class name in snake case, unique in the module
        because class names are."""
        message = self.message
        return {
            struct.name: snake_case(message.class_name(struct))
            for struct in (message.root, *message.structs)
        }

    def plan(self, struct: Struct, version: int) -> StructPlan:
        message = self.message
        flexible = version in message.flexible_versions
        regular: list[FieldPlan] = []
        tagged: list[FieldPlan] = []
        guarded: list[Field] = []
        invalid_tags: list[int] = []
        for f in struct.fields:
            if version not in f.versions:
                if not f.ignorable:
                    guarded.append(f)
                if f.tag is not None and flexible:
                    invalid_tags.append(f.tag)
                continue
            child = self.plan(f.struct, version) if f.struct is not None else None
            is_tagged = f.tag is not None and version in f.tagged_versions
            field_flexible = f.flexible_versions if f.flexible_versions is not None else None
            compact = flexible and (field_flexible is None or version in field_flexible)
            plan = FieldPlan(f, compact or is_tagged, version in f.nullable_versions, child)
            if is_tagged:
                tagged.append(plan)
            else:
                regular.append(plan)
                if f.tag is not None and flexible:
                    invalid_tags.append(f.tag)
        tagged.sort(key=lambda p: p.field.tag or 0)
        key = (
            struct.name,
            flexible,
            tuple((p.field.name, p.compact, p.nullable, id(p.child)) for p in regular),
            tuple((p.field.name, p.compact, p.nullable, id(p.child)) for p in tagged),
            tuple(f.name for f in guarded),
            tuple(sorted(invalid_tags)),
        )
        existing = self.by_key.get(key)
        if existing is None:
            existing = StructPlan(
                struct=struct,
                function=f"{self.stems[struct.name]}_v{version}",
                flexible=flexible,
                regular=tuple(regular),
                tagged=tuple(tagged),
                guarded=tuple(guarded),
                invalid_tags=tuple(sorted(invalid_tags)),
            )
            self.by_key[key] = existing
            self.ordered.append(existing)
        if version not in existing.versions:
            existing.versions.append(version)
        self.struct_versions.setdefault(struct.name, {})[version] = existing
        return existing


def plan_message(message: Message) -> MessagePlans:
    planner = Planner(message)
    root = {v: planner.plan(message.root, v) for v in message.valid_versions}
    for plan in planner.ordered:
        plan.versions.sort()
    # Common structs that no field uses still get plans, at the message's versions.
    for struct in message.structs:
        if struct.name not in planner.struct_versions:
            for v in struct.versions:
                planner.plan(struct, v)
    return MessagePlans(message, root, tuple(planner.ordered), planner.struct_versions)
