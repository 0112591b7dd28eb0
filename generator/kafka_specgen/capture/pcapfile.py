"""The packets of pcap and pcapng files, read defensively (standard library only).

``read_packets(path)`` yields a ``Packet`` per captured packet and a ``Damage`` for every
part of the file that cannot be read, and never raises for what is in the file:

- a pcap record claiming more bytes than the file's snap length (or ``MAX_PACKET``), and
  a file that ends inside a record, end the file with one ``Damage`` (a pcap file has no
  marks to find the next record by);
- a pcapng block whose length is impossible (not a multiple of 4, smaller than a block,
  past the end of the file) or whose two length fields disagree is a ``Damage``; reading
  goes on at the next offset where a whole, consistent block starts;
- a damaged section header (unknown byte-order magic) is a ``Damage`` and reading goes
  on at the next section header;
- a packet of an interface the file never described is a ``Damage`` too.

Every length is checked against what is left of the file before anything is read, so a
length bomb costs nothing. Timestamps follow each interface's ``if_tsresol`` (pcapng) or
the file's magic (microseconds or nanoseconds, pcap).
"""

from __future__ import annotations

import os
import struct
from typing import BinaryIO, Iterator, NamedTuple

#: The largest packet read (jumbo frames and loopback MTUs are far below this).
MAX_PACKET = 1 << 20
#: How much of a damaged region a ``Damage`` keeps.
KEPT_BYTES = 64 * 1024

PCAP_MAGICS = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e6),
    b"\xa1\xb2\xc3\xd4": (">", 1e6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e9),
    b"\xa1\xb2\x3c\x4d": (">", 1e9),
}
PCAPNG_SHB = 0x0A0D0D0A
_BYTE_ORDER_MAGIC = 0x1A2B3C4D
_IDB, _OPB, _SPB, _EPB = 1, 2, 3, 6
#: Block types a resync may stop at: a section header or a packet/interface block.
_KNOWN_BLOCKS = {PCAPNG_SHB, _IDB, _OPB, _SPB, 4, 5, _EPB, 7, 8, 9, 10}


class Packet(NamedTuple):
    ts: float
    linktype: int
    data: bytes
    number: int  # its place among the file's packets, from 1


class Damage(NamedTuple):
    """A part of the file that could not be read: where, why, and its bytes."""

    offset: int
    reason: str
    data: bytes
    number: int  # the number the next packet would have had


def is_pcap_magic(head: bytes) -> bool:
    return head[:4] in PCAP_MAGICS or head[:4] == PCAPNG_SHB.to_bytes(4, "big")


def read_packets(path: str) -> Iterator[Packet | Damage]:
    """Every packet of a pcap or pcapng file, and every damaged part of it."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(0)
        if head in PCAP_MAGICS:
            yield from _pcap(f, size)
        elif head == PCAPNG_SHB.to_bytes(4, "big"):
            yield from _pcapng(f, size)
        else:
            yield Damage(0, "not a pcap or pcapng file (unknown magic number)", head, 1)


def _damage(f: BinaryIO, offset: int, reason: str, number: int, length: int) -> Damage:
    f.seek(offset)
    return Damage(offset, reason, f.read(min(length, KEPT_BYTES)), number)


def _pcap(f: BinaryIO, size: int) -> Iterator[Packet | Damage]:
    header = f.read(24)
    if len(header) < 24:
        yield Damage(0, f"pcap file of {size} bytes ends inside its 24-byte header", header, 1)
        return
    order, resolution = PCAP_MAGICS[header[:4]]
    snaplen, network = struct.unpack_from(order + "II", header, 16)
    linktype = network & 0x0FFFFFFF  # the upper bits say whether frames carry an FCS
    limit = min(max(snaplen, 1 << 16), MAX_PACKET)
    record = struct.Struct(order + "IIII")
    offset, number = 24, 0
    while offset < size:
        number += 1
        raw = f.read(16)
        if len(raw) < 16:
            yield _damage(f, offset, f"file ends inside the header of packet {number}", number, 16)
            return
        sec, frac, caplen, _ = record.unpack(raw)
        if caplen > limit:
            yield _damage(
                f,
                offset,
                f"packet {number} claims {caplen} bytes, more than the file's limit "
                f"({limit}): damaged; the rest of the file ({size - offset} bytes) is unread",
                number,
                size - offset,
            )
            return
        data = f.read(caplen)
        if len(data) < caplen:
            yield _damage(
                f,
                offset,
                f"file ends {len(data)} bytes into packet {number} of {caplen} bytes "
                "(truncated)",
                number,
                16 + caplen,
            )
            return
        yield Packet(sec + frac / resolution, linktype, data, number)
        offset += 16 + caplen


class _Section:
    """One pcapng section: byte order and interfaces (link type, time stamp units)."""

    def __init__(self, order: str) -> None:
        self.order = order
        self.interfaces: list[tuple[int, float]] = []


def _pcapng(f: BinaryIO, size: int) -> Iterator[Packet | Damage]:
    offset, number = 0, 0
    section: _Section | None = None
    while offset < size:
        f.seek(offset)
        head = f.read(8)
        if len(head) < 8:
            yield _damage(f, offset, "file ends inside a block header (truncated)", number + 1, 8)
            return
        if int.from_bytes(head[:4], "big") == PCAPNG_SHB:
            magic = f.read(4)
            order = {b"\x4d\x3c\x2b\x1a": "<", b"\x1a\x2b\x3c\x4d": ">"}.get(magic)
            if order is None:
                yield _damage(
                    f,
                    offset,
                    "damaged section header: unknown byte-order magic; skipped to the next "
                    "section header",
                    number + 1,
                    size - offset,
                )
                offset = _next_section(f, offset + 4, size)
                continue
            section = _Section(order)
        if section is None:
            yield _damage(f, offset, "pcapng data before any section header", number + 1, 8)
            offset = _next_section(f, offset + 4, size)
            continue
        block_type, length = struct.unpack(section.order + "II", head)
        problem = _block_problem(f, section.order, offset, length, size)
        if problem:
            resume = _resync(f, section.order, offset + 4, size)
            yield _damage(
                f,
                offset,
                f"damaged block at byte {offset} ({problem}); {resume - offset} bytes skipped",
                number + 1,
                resume - offset,
            )
            offset = resume
            continue
        f.seek(offset + 8)
        body = f.read(length - 12)
        offset += length
        f.seek(offset)
        if block_type == _IDB:
            section.interfaces.append(_interface(section.order, body))
        elif block_type in (_EPB, _SPB, _OPB):
            number += 1
            yield _packet(section, block_type, body, number, offset - length)


def _block_problem(f: BinaryIO, order: str, offset: int, length: int, size: int) -> str | None:
    """Why the block at ``offset`` is not whole and consistent (None if it is)."""
    if length < 12 or length % 4:
        return f"length {length} is not a block length"
    if offset + length > size:
        return f"length {length} runs past the end of the file ({size - offset} bytes left)"
    f.seek(offset + length - 4)
    (trailer,) = struct.unpack(order + "I", f.read(4))
    if trailer != length:
        return f"its two length fields disagree ({length} and {trailer})"
    return None


def _resync(f: BinaryIO, order: str, start: int, size: int) -> int:
    """The next offset (4-aligned from ``start``) where a whole, consistent block of a
    known type starts; the end of the file if there is none."""
    offset = start
    while offset + 12 <= size:
        f.seek(offset)
        head = f.read(8)
        if int.from_bytes(head[:4], "big") == PCAPNG_SHB:
            return offset
        block_type, length = struct.unpack(order + "II", head)
        if block_type in _KNOWN_BLOCKS and not _block_problem(f, order, offset, length, size):
            return offset
        offset += 4
    return size


def _next_section(f: BinaryIO, start: int, size: int) -> int:
    offset = start
    marker = PCAPNG_SHB.to_bytes(4, "big")
    while offset + 4 <= size:
        f.seek(offset)
        if f.read(4) == marker:
            return offset
        offset += 4
    return size


def _interface(order: str, body: bytes) -> tuple[int, float]:
    """An interface description: link type and time stamp units per second."""
    if len(body) < 8:
        return -1, 1e6
    linktype = struct.unpack_from(order + "H", body, 0)[0]
    resolution = 1e6
    pos = 8
    while pos + 4 <= len(body):
        code, length = struct.unpack_from(order + "HH", body, pos)
        if code == 0:
            break
        if code == 9 and length >= 1:  # if_tsresol
            value = body[pos + 4]
            resolution = float(2 ** (value & 0x7F)) if value & 0x80 else float(10**value)
        pos += 4 + (length + 3) // 4 * 4
    return linktype, resolution


def _packet(
    section: _Section, block_type: int, body: bytes, number: int, offset: int
) -> Packet | Damage:
    order = section.order
    if block_type == _SPB:
        if len(body) < 4:
            return Damage(offset, f"packet block {number} is too short", body, number)
        (original,) = struct.unpack_from(order + "I", body, 0)
        interface, data, ts_units = 0, body[4 : 4 + original], 0
    else:
        if block_type == _EPB and len(body) >= 20:
            interface, high, low, caplen = struct.unpack_from(order + "IIII", body, 0)
            start = 20
        elif block_type == _OPB and len(body) >= 20:
            interface, _, high, low, caplen = struct.unpack_from(order + "HHIII", body, 0)
            start = 20
        else:
            return Damage(offset, f"packet block {number} is too short", body[:KEPT_BYTES], number)
        if start + caplen > len(body):
            return Damage(
                offset,
                f"packet block {number} claims {caplen} bytes, more than the block holds",
                body[:KEPT_BYTES],
                number,
            )
        data, ts_units = body[start : start + caplen], (high << 32) + low
    if interface >= len(section.interfaces):
        return Damage(
            offset,
            f"packet {number} names interface {interface}, which the file never described",
            body[:KEPT_BYTES],
            number,
        )
    linktype, resolution = section.interfaces[interface]
    return Packet(ts_units / resolution, linktype, bytes(data), number)
