"""Column types for rows: capture rows (``frames.Row``, ``pcap.Segment``) and table rows.

A row type is a ``NamedTuple`` whose annotations carry the Spark type of each column
(``OptLong`` is an ``int | None`` stored as Spark's ``long``). Its field names, Spark DDL
(``ddl``) and Arrow schema (``arrow_schema``) all come from that one declaration, so a
column is declared in one place. ``rows_of`` and ``to_batches`` turn Arrow record batches
into rows and back. Standard library only; pyarrow is imported when Arrow is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Iterable, Iterator, Optional, Sequence, TypeVar, get_type_hints


@dataclass(frozen=True)
class ArrayOf:
    """An array column whose items are rows of ``row`` (a NamedTuple of column types)."""

    row: type


Str = Annotated[str, "string"]
OptStr = Annotated[Optional[str], "string"]
OptStrs = Annotated[Optional[list[str]], "array<string>"]
OptInt = Annotated[Optional[int], "int"]
OptLong = Annotated[Optional[int], "long"]
Long = Annotated[int, "long"]
Int = Annotated[int, "int"]
Double = Annotated[float, "double"]
OptDouble = Annotated[Optional[float], "double"]
Bytes = Annotated[bytes, "binary"]
OptBytes = Annotated[Optional[bytes], "binary"]
Bool = Annotated[bool, "boolean"]
OptBool = Annotated[Optional[bool], "boolean"]


def spark_types(row: type) -> dict[str, str | ArrayOf]:
    """Each field of ``row`` and its Spark type (or ``ArrayOf``), in order."""
    hints = get_type_hints(row, include_extras=True)
    fields: tuple[str, ...] = getattr(row, "_fields")
    out: dict[str, str | ArrayOf] = {}
    for name in fields:
        metadata = getattr(hints[name], "__metadata__", ())
        if not metadata:
            raise TypeError(f"{row.__name__}.{name} has no column type")
        out[name] = metadata[0]
    return out


def ddl(row: type) -> str:
    """Spark's DDL of ``row``: ``conn string, ts double, ...``."""
    return ", ".join(f"{name} {_ddl_type(kind)}" for name, kind in spark_types(row).items())


def _ddl_type(kind: str | ArrayOf) -> str:
    if isinstance(kind, ArrayOf):
        items = ", ".join(f"{n}: {_ddl_type(k)}" for n, k in spark_types(kind.row).items())
        return f"array<struct<{items}>>"
    return kind


def arrow_schema(row: type) -> Any:
    """The Arrow schema of ``row``, with the exact types Spark expects of it."""
    import pyarrow as pa  # type: ignore[import-untyped]  # no stubs or py.typed

    return pa.schema(_arrow_fields(row))


def _arrow_fields(row: type) -> list[Any]:
    import pyarrow as pa

    scalars = {
        "string": pa.string(),
        "double": pa.float64(),
        "int": pa.int32(),
        "long": pa.int64(),
        "binary": pa.binary(),
        "boolean": pa.bool_(),
        "array<string>": pa.list_(pa.string()),
    }
    fields = []
    for name, kind in spark_types(row).items():
        if isinstance(kind, ArrayOf):
            fields.append(pa.field(name, pa.list_(pa.struct(_arrow_fields(kind.row)))))
        else:
            fields.append(pa.field(name, scalars[kind]))
    return fields


R = TypeVar("R")


def rows_of(batches: Iterable[Any], row: type[R]) -> Iterator[R]:
    """The rows (``row``, a NamedTuple of column types) of Arrow record batches of its
    columns."""
    fields: tuple[str, ...] = getattr(row, "_fields")
    make = getattr(row, "_make")
    for batch in batches:
        columns = [batch.column(name).to_pylist() for name in fields]
        yield from map(make, zip(*columns))


def to_batches(
    rows: Iterable[tuple[Any, ...]], schema: Any, batch_rows: int = 8192
) -> Iterator[Any]:
    """Arrow record batches (of ``schema``, exact types) of tuples in its column order."""
    rows = iter(rows)
    while True:
        batch = [row for _, row in zip(range(batch_rows), rows)]
        if not batch:
            return
        yield batch_of(batch, schema)


def batch_of(rows: Sequence[tuple[Any, ...]], schema: Any) -> Any:
    """One Arrow record batch (of ``schema``) of tuples in its column order."""
    import pyarrow as pa

    columns = list(zip(*rows)) if rows else [() for _ in schema]
    return pa.RecordBatch.from_arrays(
        [pa.array(col, type=field.type) for col, field in zip(columns, schema)], schema=schema
    )
