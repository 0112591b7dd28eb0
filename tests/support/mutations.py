"""Mutations of valid inputs for the decoder fuzzer (``tests.support.fuzz``): bit flips,
interesting bytes, insertions, deletions, duplications, truncations, and length bombs
written over (or inserted at) any offset. ``bomb_sweep`` writes every bomb at every offset
of a seed (systematic); ``mutate`` stacks one to three random mutations (random)."""

from __future__ import annotations

import random
import struct
from typing import Callable, Iterator

INT32_BOMBS = [0x7FFFFFFF, -0x80000000, -2, -100, 0x10000000, 0xFFFF]
INT16_BOMBS = [0x7FFF, -2, -0x8000, 0x100]
VARINT_BOMBS = [
    b"\xff\xff\xff\xff\x07",  # 2^31-1
    b"\xff\xff\xff\xff\x0f",  # 2^32-1
    b"\x80\x80\x80\x80\x80\x00",  # over-long: 6 bytes
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # 10 bytes (a 64-bit varint)
    b"\xff\xff\xff\x7f",  # 2^28-1
    b"\x80\x01",  # 128
]
INTERESTING = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x02, 0x03]


def bombs() -> list[tuple[str, bytes]]:
    """Every length bomb, as (name, bytes)."""
    out = [(f"int32 {n:#x}", struct.pack(">i", n)) for n in INT32_BOMBS]
    out += [(f"int16 {n:#x}", struct.pack(">h", n)) for n in INT16_BOMBS]
    out += [(f"uvarint {b.hex()}", b) for b in VARINT_BOMBS]
    return out


BOMBS = bombs()


def overwrite(data: bytes, pos: int, patch: bytes) -> bytes:
    return data[:pos] + patch + data[pos + len(patch) :]


def bomb_sweep(data: bytes) -> Iterator[tuple[str, bytes]]:
    """Every bomb written over every offset, plus every truncation: systematic cases."""
    for pos in range(len(data)):
        for name, patch in BOMBS:
            yield f"bomb {name.split()[0]} overwrite", overwrite(data, pos, patch)
        yield "truncate", data[:pos]


def _flip(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return b"\x00"
    pos = rng.randrange(len(data))
    return overwrite(data, pos, bytes([data[pos] ^ (1 << rng.randrange(8))]))


def _byte(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return bytes([rng.choice(INTERESTING)])
    return overwrite(data, rng.randrange(len(data)), bytes([rng.choice(INTERESTING)]))


def _insert(rng: random.Random, data: bytes) -> bytes:
    pos = rng.randint(0, len(data))
    return data[:pos] + rng.randbytes(rng.randint(1, 8)) + data[pos:]


def _delete(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    pos = rng.randrange(len(data))
    return data[:pos] + data[pos + rng.randint(1, 8) :]


def _duplicate(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    pos = rng.randrange(len(data))
    chunk = data[pos : pos + rng.randint(1, 16)]
    return data[:pos] + chunk + data[pos:]


def _truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randint(0, max(len(data) - 1, 0))]


def _append(rng: random.Random, data: bytes) -> bytes:
    return data + rng.randbytes(rng.randint(1, 4))


def _bomb_overwrite(rng: random.Random, data: bytes) -> bytes:
    _, patch = rng.choice(BOMBS)
    return overwrite(data, rng.randint(0, max(len(data) - 1, 0)), patch)


def _bomb_insert(rng: random.Random, data: bytes) -> bytes:
    _, patch = rng.choice(BOMBS)
    pos = rng.randint(0, len(data))
    return data[:pos] + patch + data[pos:]


MUTATORS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    "flip": _flip,
    "byte": _byte,
    "insert": _insert,
    "delete": _delete,
    "duplicate": _duplicate,
    "truncate": _truncate,
    "append": _append,
    "bomb overwrite": _bomb_overwrite,
    "bomb insert": _bomb_insert,
}
_MUTATOR_ITEMS = list(MUTATORS.items())


def mutate(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    """One to three stacked random mutations; returns (name of the first, bytes)."""
    name, fn = rng.choice(_MUTATOR_ITEMS)
    data = fn(rng, data)
    for _ in range(rng.choice((0, 0, 1, 2))):
        data = rng.choice(_MUTATOR_ITEMS)[1](rng, data)
    return name, data
