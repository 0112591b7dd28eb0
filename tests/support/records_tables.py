"""The constant tables of ``templates/runtime/_crc32c.py``, computed from their definitions.

The runtime writes its tables as literals (nothing is computed when a generated package is
imported); ``tests/runtime/test_records.py`` checks those literals against what this module
computes. ``python -m tests.records_tables`` prints the literal block to paste after a change.

- ``slicing_tables()``: the 16 slicing-by-16 tables of the reflected CRC-32C: ``T[0]`` is the
  byte table, ``T[k][b]`` the CRC register after byte ``b`` followed by ``k`` zero bytes.
- ``fold_schedule()``: the fold widths ``k`` (in bits) and, for each, the set bits of
  ``x^k mod P`` in reflected order. Each ``k`` is the one of lowest weight in a window, so a
  fold costs few shift-and-XOR steps; the test checks only the arithmetic, not the choice.
"""

from __future__ import annotations

POLY = 0x11EDC6F41  # CRC-32C (Castagnoli), normal form with the x^32 term
POLY_REFLECTED = 0x82F63B78

# fold widths: from 80 bits up, each about 1.5 times the previous, up to half the largest
# width the runtime folds (it feeds at most 256 KiB = 2^21 bits at a time)
FOLD_START = 80
FOLD_RATIO = 1.5
FOLD_MAX_WIDTH = 1 << 21


def byte_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (POLY_REFLECTED if c & 1 else 0)
        table.append(c)
    return table


def slicing_tables() -> list[list[int]]:
    t0 = byte_table()
    tables = [t0]
    for _ in range(15):
        prev = tables[-1]
        tables.append([(prev[i] >> 8) ^ t0[prev[i] & 0xFF] for i in range(256)])
    return tables


def clmul(a: int, b: int) -> int:
    result = 0
    while b:
        if b & 1:
            result ^= a
        a <<= 1
        b >>= 1
    return result


def poly_mod(a: int, p: int = POLY) -> int:
    degree = p.bit_length()
    while a.bit_length() >= degree:
        a ^= p << (a.bit_length() - degree)
    return a


def x_pow_mod(k: int) -> int:
    """x^k mod P, in normal (non-reflected) bit order."""
    result, base = 1, 2
    while k:
        if k & 1:
            result = poly_mod(clmul(result, base))
        base = poly_mod(clmul(base, base))
        k >>= 1
    return result


def reflect32(value: int) -> int:
    return int(f"{value:032b}"[::-1], 2)


def taps(k: int) -> tuple[int, ...]:
    """The set bits of x^k mod P in reflected order: the shifts one fold by ``k`` makes."""
    constant = reflect32(x_pow_mod(k))
    return tuple(bit for bit in range(32) if constant >> bit & 1)


def lightest(lo: int, hi: int) -> int:
    """The k in [lo, hi) whose x^k mod P has the fewest set bits (the first of them)."""
    best_k, best_weight = lo, 33
    c = x_pow_mod(lo)
    for k in range(lo, hi):
        weight = bin(c).count("1")
        if weight < best_weight:
            best_k, best_weight = k, weight
        c <<= 1
        if c >> 32:
            c ^= POLY
    return best_k


def fold_schedule() -> list[tuple[int, tuple[int, ...]]]:
    schedule = []
    k = FOLD_START
    # the runtime folds a width w with a k near (w + 31) / 2
    while not schedule or schedule[-1][0] < (FOLD_MAX_WIDTH + 32) // 2:
        chosen = lightest(k, k + max(1, min(k // 4, 30000)))
        schedule.append((chosen, taps(chosen)))
        k = int(chosen * FOLD_RATIO) + 1
    return schedule


def render() -> str:
    lines = ["# fmt: off"]
    for number, table in enumerate(slicing_tables()):
        lines.append(f"_T{number}: tuple[int, ...] = (")
        for row in range(0, 256, 8):
            cells = ", ".join(f"0x{v:08x}" for v in table[row : row + 8])
            lines.append(f"    {cells},")
        lines.append(")")
    lines.append("_TABLES = (")
    lines.append("    _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7,")
    lines.append("    _T8, _T9, _T10, _T11, _T12, _T13, _T14, _T15,")
    lines.append(")")
    schedule = fold_schedule()
    lines.append("_FOLD_WIDTHS: tuple[int, ...] = (")
    for row in range(0, len(schedule), 8):
        lines.append("    " + ", ".join(str(k) for k, _ in schedule[row : row + 8]) + ",")
    lines.append(")")
    lines.append("_FOLD_TAPS: tuple[tuple[int, ...], ...] = (")
    for _, bits in schedule:
        lines.append(f"    ({', '.join(str(b) for b in bits)}),")
    lines.append(")")
    lines.append("# fmt: on")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render())
