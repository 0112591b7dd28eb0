"""The generator's table of wire types and the runtime's implementation of them agree.

``generator/wiretypes.py`` is the one table the generator reads; the runtime of a
generated package implements the same types in code (``_read``, ``_write``,
``_diagnose``). This holds the two to each other, value by value.
"""

from __future__ import annotations

import struct
import uuid

import pytest

from kafka_messages import _diagnose, _read, _write
from kafka_specgen.view_kit import LENGTH_HELPERS
from kafka_specgen.wiretypes import INT_RANGES, WIRE_TYPES

FIXED = [name for name, t in WIRE_TYPES.items() if t.fixed]


def test_the_runtime_knows_the_same_integer_ranges() -> None:
    assert _diagnose.INT_RANGES == INT_RANGES


@pytest.mark.parametrize("name", FIXED)
def test_fixed_types_read_and_pack_with_the_tables_struct_code(name: str) -> None:
    wire = WIRE_TYPES[name]
    assert wire.struct_code is not None
    assert struct.calcsize(">" + wire.struct_code) == wire.size == wire.classic_min
    assert wire.items is not None and wire.packer is not None
    reader = getattr(_read, wire.items)
    packer = getattr(_write, wire.packer)
    assert (reader.code, reader.size) == (wire.struct_code, wire.size)
    assert packer.code == wire.struct_code
    value = wire.default if wire.int_range is None else wire.int_range[0]
    data = packer.pack((value, value))
    assert reader.read(data, 0, 2) == ((value, value), 2 * wire.size)


@pytest.mark.parametrize("key", sorted(LENGTH_HELPERS), ids=lambda k: "-".join(map(str, k)))
def test_every_helper_the_generator_names_is_in_the_runtime(key: tuple[str, bool, bool]) -> None:
    """The generated readers and writers call these by name: a missing one would only show
    when a module using it is imported."""
    what, compact, nullable = key
    reader, writer = LENGTH_HELPERS[key]
    assert callable(getattr(_read, reader)) and callable(getattr(_write, writer))
    assert ("compact_" in reader) == compact == ("compact_" in writer)
    assert ("nullable_" in reader) == nullable
    assert reader.endswith(what) and writer.endswith(what)


def test_python_types_and_defaults_match() -> None:
    for name, wire in WIRE_TYPES.items():
        if wire.python == "UUID":
            assert isinstance(wire.default, uuid.UUID) and wire.default == _read.ZERO_UUID
        else:
            assert type(wire.default).__name__ == wire.python, name


@pytest.mark.parametrize("name", ["string", "bytes", "records", "uuid"])
def test_variable_types_take_their_minimum_sizes(name: str) -> None:
    """The smallest non-null value the runtime writes is the table's minimum size."""
    wire = WIRE_TYPES[name]
    for compact in (False, True):
        out = bytearray()
        if name == "uuid":
            _write.write_uuid(out, uuid.UUID(int=0))
        elif name == "string":
            (_write.write_compact_string if compact else _write.write_string)(out, "")
        else:
            (_write.write_compact_bytes if compact else _write.write_bytes)(out, b"")
        assert len(out) == wire.min_size(compact), (name, compact)


def test_json_forms_are_the_runtimes_kinds() -> None:
    from kafka_messages import _json

    kinds = {wire.json for wire in WIRE_TYPES.values()}
    assert kinds <= set(_json._TO_JSON)
