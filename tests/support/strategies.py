"""Hypothesis strategies for generated messages, built from the generator's MODEL.

The strategies never look at the generated code to decide what a message holds: the
fields, their versions, nullability, types and nested structs all come from
``kafka_specgen.model``. The generated package only supplies the classes to instantiate, so a
generated class that disagrees with its model (a missing field, a wrong struct class, a
codec that drops a value) shows up as an error or a failed round trip.

Rules, for one struct at one version:

- a field whose ``versions`` do not hold the version keeps its default;
- otherwise it gets a random value of its type: ints over the whole range of their wire
  type, finite floats, short unicode text (no surrogates), short bytes, any UUID, lists of
  up to three items (the constructors store them as tuples), nested structs built the
  same way at the same version;
- ``None`` only where the version is in the field's ``nullable_versions``, or for a
  struct field tagged at the version (None: the tag is absent);
- in a flexible version, the struct also gets a few unknown tagged fields (raw bytes) with
  tags above every known tag of the struct, in ascending tag order (as decode returns them).
"""

from __future__ import annotations

import importlib
import uuid
from types import ModuleType
from typing import Any, Callable

from hypothesis import strategies as st

from kafka_specgen.model import Field, FieldType, Message, Struct
from kafka_specgen.wiretypes import INT_RANGES
from kafka_specgen.catalog import module_name

from bench.peers import struct_class  # the peers' adapters find struct classes the same way

MAX_LIST = 3
MAX_TEXT = 20
MAX_BYTES = 24

TEXT = st.text(alphabet=st.characters(codec="utf-8"), max_size=MAX_TEXT)  # no surrogates
BYTES = st.binary(max_size=MAX_BYTES)
UUIDS = st.builds(lambda n: uuid.UUID(int=n), st.integers(0, 2**128 - 1))
FLOATS = st.floats(allow_nan=False)


# --- finding generated classes ---------------------------------------------------------


def package_name(package: ModuleType | str) -> str:
    return package if isinstance(package, str) else package.__name__


def message_module(package: ModuleType | str, message: Message) -> ModuleType:
    """The generated module that holds ``message`` (imported on demand)."""
    return importlib.import_module(f"{package_name(package)}.{module_name(message)}")


def message_class(package: ModuleType | str, message: Message) -> type:
    """The generated class of ``message`` inside the generated ``package``."""
    return getattr(message_module(package, message), message.name)  # type: ignore[no-any-return]


def resolve(cls_or_lookup: Any, message: Message) -> type:
    """Accept the message class, the generated package (module or name), or a callable."""
    if isinstance(cls_or_lookup, type):
        return cls_or_lookup
    if isinstance(cls_or_lookup, (str, ModuleType)):
        return message_class(cls_or_lookup, message)
    if callable(cls_or_lookup):
        return cls_or_lookup(message)  # type: ignore[no-any-return]
    raise TypeError(f"cannot find the class of {message.name} from {cls_or_lookup!r}")


# --- random instances --------------------------------------------------------------------


def primitive(kind: str) -> st.SearchStrategy[Any]:
    if kind in INT_RANGES:
        lo, hi = INT_RANGES[kind]
        return st.integers(lo, hi)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return FLOATS
    if kind == "string":
        return TEXT
    if kind in ("bytes", "records"):
        return BYTES
    if kind == "uuid":
        return UUIDS
    raise AssertionError(f"not a primitive type: {kind}")


def unknown_tags(struct: Struct) -> st.SearchStrategy[list[Any]]:
    """A few unknown tagged fields, tags above every known tag, sorted, unique."""
    first = max((f.tag for f in struct.fields if f.tag is not None), default=-1) + 1
    return st.lists(
        st.tuples(st.integers(first, first + 40), BYTES),
        max_size=2,
        unique_by=lambda t: t[0],
    ).map(lambda items: sorted(items))


class InstanceBuilder:
    """Strategies for every struct of one message at one version (cached per struct)."""

    def __init__(self, message_cls: type, message: Message, version: int) -> None:
        if version not in message.valid_versions:
            raise ValueError(f"{message.name} has no version {version}")
        self.message_cls = message_cls
        self.message = message
        self.version = version
        self.flexible = version in message.flexible_versions
        self.cache: dict[str, st.SearchStrategy[Any]] = {}
        package = message_cls.__module__.rpartition(".")[0]
        plan = importlib.import_module(f"{package}._plan")
        self.raw_tag: Callable[[int, bytes], Any] = plan.RawTaggedField

    def struct(self, struct: Struct) -> st.SearchStrategy[Any]:
        key = struct.name
        if key not in self.cache:
            self.cache[key] = st.deferred(lambda: self._struct(struct))
        return self.cache[key]

    def _struct(self, struct: Struct) -> st.SearchStrategy[Any]:
        cls = struct_class(self.message_cls, self.message, struct)
        values = {f.attr: self.field(f) for f in struct.fields if self.version in f.versions}
        if self.flexible:
            raw_tag = self.raw_tag
            values["unknown_tagged_fields"] = unknown_tags(struct).map(
                lambda items: tuple(raw_tag(tag, data) for tag, data in items)
            )
        return st.fixed_dictionaries(values).map(lambda kwargs: cls(**kwargs))

    def field(self, f: Field) -> st.SearchStrategy[Any]:
        value = self.value(f, f.type)
        tagged_struct = f.type.is_struct and self.version in f.tagged_versions
        if self.version in f.nullable_versions or tagged_struct:
            value = st.none() | value  # an absent tagged struct is None
        return value

    def value(self, f: Field, ftype: FieldType) -> st.SearchStrategy[Any]:
        if ftype.is_array:
            assert ftype.element is not None
            return st.lists(self.value(f, ftype.element), max_size=MAX_LIST)
        if ftype.is_struct:
            assert f.struct is not None, f"{f.name}: struct type without a struct model"
            return self.struct(f.struct)
        return primitive(ftype.text)


def instances(cls_or_lookup: Any, message: Message, version: int) -> st.SearchStrategy[Any]:
    """Random instances of ``message``'s generated class that are legal at ``version``."""
    cls = resolve(cls_or_lookup, message)
    return InstanceBuilder(cls, message, version).struct(message.root)


# --- deterministic instances ----------------------------------------------------------------


SAMPLES: dict[str, Any] = {
    "int8": -7,
    "int16": -300,
    "int32": -70000,
    "int64": -(2**40) - 3,
    "uint16": 65535,
    "uint32": 2**32 - 1,
    "bool": True,
    "float64": -1.5,
    "string": "héllo ✓",
    "bytes": b"\x00\xffab",
    "records": b"\x01\x02\x03",
    "uuid": uuid.UUID("0123456789abcdef0123456789abcdef"),
}


def filled_instance(
    cls_or_lookup: Any,
    message: Message,
    version: int,
    *,
    nulls: bool = False,
    list_depth: int = 99,
    scalars: bool = True,
) -> Any:
    """One instance with every field present at ``version`` set to a non-default value.

    Lists hold two items, except lists nested inside ``list_depth`` or more struct arrays,
    which are empty (``list_depth=1``: top-level lists of structs whose own lists are empty).
    With ``nulls=True`` every field nullable at ``version`` is None instead. Tagged fields
    get non-default values, so they are written on the wire. With ``scalars=False`` only
    lists and structs are filled: every primitive field keeps its default (the smallest
    items a list can hold).
    """
    cls = resolve(cls_or_lookup, message)

    def build(struct: Struct, depth: int = 0) -> Any:
        kwargs: dict[str, Any] = {}
        for f in struct.fields:
            if version not in f.versions:
                continue
            if nulls and version in f.nullable_versions:
                kwargs[f.attr] = None
                continue
            if not scalars and not (f.type.is_array or f.type.is_struct):
                continue
            kwargs[f.attr] = value(f, f.type, depth)
        return struct_class(cls, message, struct)(**kwargs)

    def value(f: Field, ftype: FieldType, depth: int) -> Any:
        if ftype.is_array:
            assert ftype.element is not None
            if depth >= list_depth:
                return []
            return [value(f, ftype.element, depth + 1) for _ in range(2)]
        if ftype.is_struct:
            assert f.struct is not None
            return build(f.struct, depth)
        sample = SAMPLES[ftype.text]
        if sample == f.default and ftype.text in INT_RANGES:
            sample = 0 if f.default != 0 else 1
        elif sample == f.default and ftype.text == "bool":
            sample = not sample
        elif sample == f.default:
            sample = SAMPLES["string"] + "!" if ftype.text == "string" else sample
        return sample

    return build(message.root)


def versions_of(message: Message) -> list[int]:
    return list(message.valid_versions)


def all_pairs(messages: list[Message]) -> list[tuple[Message, int]]:
    """Every (message, version) of a corpus, in a stable order."""
    return [(m, v) for m in messages for v in versions_of(m)]
