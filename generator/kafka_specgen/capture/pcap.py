"""Kafka frames from pcap/pcapng files, in plain Python (no Spark).

The containers are read by ``pcapfile`` (damaged, truncated and oversized parts become
error rows, and reading goes on where it can); link, IP and TCP headers are unpacked
here (Ethernet with VLAN tags, Linux cooked v1/v2, BSD loopback, raw IPv4/IPv6). TCP
reassembly is ours and small: per connection and direction, segments are put in sequence
order (the sequence number unwrapped against the previous segment, so streams beyond 4 GiB
work), retransmitted and overlapping bytes are taken once (the first copy captured wins),
out-of-order segments fall into place, and what the capture missed is a hole that
``frames.split_stream`` turns into an error row. Requests and responses are paired by
correlation id (``frames.pair_frames``).

Which side is the client: the sender of a SYN (or the receiver of a SYN-ACK); without a
handshake in the capture, the side on a ``broker_ports`` port is the broker; failing that
the side whose first bytes read as a request header is the client; failing that the lower
port is the broker. A new SYN on a 4-tuple that already carried data starts a new
connection (port reuse).

Files read together are one capture: a TCP stream may go on in the next of a set of rotated
files (``tcpdump -C``/``-G``), so the segments of a connection are taken from every file, in
``capture_order`` (time stamp, then file, then packet), before reassembly. A connection is
named ``"<file>#<packet>"`` after its first packet (its number in that file, from 1). The
Spark data source reads the segments of each file in its own partition, shuffles them by
``connection_key`` and runs ``reassemble`` on each connection: the same code as
``pcap_rows``.
"""

from __future__ import annotations

import os
import struct
from typing import Any, Iterable, Iterator, NamedTuple, Optional, Sequence

from .columns import Bytes, Double, Int, Long, OptStr, Str, ddl
from .frames import MAX_FRAME_SIZE, PCAP, Row, error_row
from .pcapfile import Damage, is_pcap_magic, read_packets
from . import tls
from .streams import Chunk, StreamFrame, pair_frames, split_stream
from .tls import looks_like_tls

READ_SIZE = 1 << 18  # a packet is read whole up to this many bytes (loopback MTU is 64 KiB)
TCP = 6
SYN, ACK = 0x02, 0x10

_ETHER_IPV4, _ETHER_IPV6, _ETHER_VLAN = 0x0800, 0x86DD, (0x8100, 0x88A8, 0x9100)
_BSD_AF_INET6 = (10, 24, 28, 30)


class Segment(NamedTuple):
    ts: Double
    src: Str  # "ip:port"
    dst: Str
    seq: Long  # uint32
    flags: Int
    payload: Bytes
    file: Str = ""  # name of the capture file
    file_no: Int = 0  # its place among the files read together
    packet: Long = 0  # the packet's number in its file, from 1
    error: OptStr = None  # set on a part of the file that cannot be read (payload: its bytes)


#: Spark's DDL of a segment.
SEGMENT_DDL = ddl(Segment)


def capture_order(segment: Segment) -> tuple[float, int, int]:
    """Sort key of segments from several files: time stamp, then file, then packet."""
    return segment.ts, segment.file_no, segment.packet


def connection_key(segment: Segment) -> tuple[str, str]:
    """The two endpoints of a segment's 4-tuple, in either direction the same."""
    return min(segment.src, segment.dst), max(segment.src, segment.dst)


def read_segments(path: str, file_no: int = 0, name: str | None = None) -> Iterator[Segment]:
    """The TCP segments of a pcap or pcapng file, in capture order, and an error segment
    (``error`` set) for every part of the file that cannot be read (``pcapfile``)."""
    name = name or os.path.basename(path)
    try:
        for item in read_packets(path):
            if isinstance(item, Damage):
                yield Segment(
                    0.0,
                    "",
                    "",
                    0,
                    0,
                    item.data,
                    name,
                    file_no,
                    item.number,
                    f"{name}: {item.reason}",
                )
                continue
            segment = parse_packet(item.data, item.linktype, item.ts, name, file_no, item.number)
            if segment is not None:
                yield segment
    except OSError as exc:  # the file vanished or cannot be read
        yield Segment(0.0, "", "", 0, 0, b"", name, file_no, 0, f"{name}: cannot be read ({exc})")


def parse_packet(
    data: bytes, linktype: int, ts: float, file: str = "", file_no: int = 0, packet: int = 0
) -> Segment | None:
    """A TCP segment from one captured packet; ``None`` if it is not TCP over IP."""
    ip = _ip_start(data, linktype)
    if ip is None or len(data) < ip + 20:
        return None
    version = data[ip] >> 4
    if version == 4:
        ihl = (data[ip] & 0x0F) * 4
        total = int.from_bytes(data[ip + 2 : ip + 4], "big")
        frag = int.from_bytes(data[ip + 6 : ip + 8], "big")
        if data[ip + 9] != TCP or frag & 0x3FFF:  # not TCP, or a fragment
            return None
        src_ip = ".".join(str(b) for b in data[ip + 12 : ip + 16])
        dst_ip = ".".join(str(b) for b in data[ip + 16 : ip + 20])
        tcp = ip + ihl
        end = ip + total if total else len(data)  # TSO captures may say 0
    elif version == 6:
        if len(data) < ip + 40:
            return None
        next_header, tcp = data[ip + 6], ip + 40
        while next_header in (0, 43, 60) and len(data) >= tcp + 8:  # hop-by-hop, routing, dest
            next_header, tcp = data[tcp], tcp + (data[tcp + 1] + 1) * 8
        if next_header != TCP:
            return None
        src_ip = "[" + _ipv6(data[ip + 8 : ip + 24]) + "]"
        dst_ip = "[" + _ipv6(data[ip + 24 : ip + 40]) + "]"
        payload_len = int.from_bytes(data[ip + 4 : ip + 6], "big")
        end = ip + 40 + payload_len if payload_len else len(data)
    else:
        return None
    if len(data) < tcp + 20:
        return None
    sport, dport, seq = struct.unpack_from(">HHI", data, tcp)
    offset = (data[tcp + 12] >> 4) * 4
    flags = data[tcp + 13]
    payload = data[tcp + offset : min(end, len(data))]
    return Segment(
        ts,
        f"{src_ip}:{sport}",
        f"{dst_ip}:{dport}",
        seq,
        flags,
        bytes(payload),
        file,
        file_no,
        packet,
    )


def _ip_start(data: bytes, linktype: int) -> int | None:
    if linktype == 1:  # Ethernet
        pos, ethertype = 12, int.from_bytes(data[12:14], "big")
        while ethertype in _ETHER_VLAN:
            pos += 4
            ethertype = int.from_bytes(data[pos : pos + 2], "big")
        return pos + 2 if ethertype in (_ETHER_IPV4, _ETHER_IPV6) else None
    if linktype in (101, 12, 14, 228, 229):  # raw IP
        return 0
    if linktype == 0:  # BSD loopback, family in host order
        family = int.from_bytes(data[:4], "little")
        family = family if family < 256 else int.from_bytes(data[:4], "big")
        return 4 if family == 2 or family in _BSD_AF_INET6 else None
    if linktype == 108:  # OpenBSD loopback, network order
        return 4
    if linktype == 113:  # Linux cooked v1
        return 16 if int.from_bytes(data[14:16], "big") in (_ETHER_IPV4, _ETHER_IPV6) else None
    if linktype == 276:  # Linux cooked v2
        return 20 if int.from_bytes(data[0:2], "big") in (_ETHER_IPV4, _ETHER_IPV6) else None
    return None


def _ipv6(raw: bytes) -> str:
    import ipaddress

    return str(ipaddress.IPv6Address(raw))


# --- connections ----------------------------------------------------------------------------


class _Side:
    """One direction of a connection: segments with unwrapped stream offsets."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int, float, bytes]] = []  # (offset, index, ts, payload)
        self.syn_offset: int | None = None
        self.last: tuple[int, int] | None = None  # (seq, offset)

    def add(self, segment: Segment, index: int) -> None:
        seq = segment.seq
        if self.last is None:
            offset = 0
        else:
            last_seq, last_offset = self.last
            offset = last_offset + ((seq - last_seq + 2**31) % 2**32 - 2**31)
        self.last = (seq, offset)
        if segment.flags & SYN:
            self.syn_offset = offset
        if segment.payload:
            # a SYN's own sequence number comes before its data (TCP fast open)
            start = offset + 1 if segment.flags & SYN else offset
            self.items.append((start, index, segment.ts, segment.payload))

    def chunks(self) -> list[Chunk]:
        """Non-overlapping chunks in stream order, offsets from the first data byte."""
        if not self.items:
            return []
        self.items.sort()
        base = self.syn_offset + 1 if self.syn_offset is not None else self.items[0][0]
        chunks: list[Chunk] = []
        done = base  # everything before this offset is taken
        for offset, _, ts, payload in self.items:
            end = offset + len(payload)
            if end <= done:
                continue  # a retransmission of bytes already taken
            if offset < done:
                payload, offset = payload[done - offset :], done
            chunks.append(Chunk(offset - base, payload, ts))
            done = end
        return chunks

    def first_bytes(self) -> bytes:
        return min(self.items)[3] if self.items else b""


class _Connection:
    def __init__(self, name: str) -> None:
        self.name = name
        self.sides: dict[str, _Side] = {}
        self.client: str | None = None  # known from a handshake

    @property
    def has_data(self) -> bool:
        return any(side.items for side in self.sides.values())


#: TLS session keys (``tls.read_keylog``); None: no key log was given.
Keys = Optional[dict[tuple[str, bytes], bytes]]


def reassemble(
    segments: Iterable[Segment], broker_ports: Iterable[int] = (), keys: Keys = None
) -> list[Row]:
    """Rows (one per frame) of every Kafka connection among ``segments``, which come in
    ``capture_order`` (at least those of each ``connection_key``). A TLS connection is
    decrypted with ``keys`` (``tls``); without them its two directions are error rows."""
    ports = frozenset(broker_ports)
    current: dict[tuple[str, str], _Connection] = {}
    connections: list[_Connection] = []
    rows: list[Row] = []
    for index, segment in enumerate(segments):
        if segment.error is not None:  # a part of the file that could not be read
            damage = f"{segment.file}#damage{segment.packet}"
            rows.append(error_row(damage, segment.payload, segment.error, PCAP))
            continue
        key = connection_key(segment)
        conn = current.get(key)
        syn_only = segment.flags & (SYN | ACK) == SYN
        if conn is None or (syn_only and conn.has_data):
            conn = current[key] = _Connection(f"{segment.file}#{segment.packet}")
            connections.append(conn)
        if segment.flags & SYN:
            conn.client = segment.src if syn_only else segment.dst
        conn.sides.setdefault(segment.src, _Side()).add(segment, index)
    for conn in connections:
        if not conn.has_data:
            continue
        client, broker = _roles(conn, ports)
        empty = _Side()
        requests, responses = conn.sides.get(client, empty), conn.sides.get(broker, empty)
        client_chunks, broker_chunks = requests.chunks(), responses.chunks()
        if client_chunks and looks_like_tls(client_chunks[0].data):
            client_plain, broker_plain = tls.decrypt(client_chunks, broker_chunks, keys)
            streams = (_plaintext(client_plain), _plaintext(broker_plain))
        else:
            streams = (list(split_stream(client_chunks)), list(split_stream(broker_chunks)))
        rows += pair_frames(conn.name, client or None, broker or None, *streams)
    return rows


def _plaintext(decrypted: tls.Decrypted) -> list[StreamFrame]:
    """The frames of a decrypted direction, and an error frame where decryption stopped."""
    frames = list(split_stream(decrypted.chunks))
    if decrypted.problem is not None:
        ts = decrypted.chunks[-1].ts if decrypted.chunks else 0.0
        frames.append(StreamFrame(ts, decrypted.rest, decrypted.problem))
    return frames


def _roles(conn: _Connection, ports: frozenset[int]) -> tuple[str, str]:
    """``(client, broker)`` endpoints of a connection."""
    ends = sorted(conn.sides)
    if len(ends) == 1:  # one direction only: decide from that side's bytes
        only = ends[0]
        if conn.client is not None:
            return (only, "") if conn.client == only else ("", only)
        if _port(only) in ports or not _looks_like_request(conn.sides[only].first_bytes()):
            return "", only
        return only, ""
    a, b = ends
    if conn.client in (a, b):
        return (a, b) if conn.client == a else (b, a)
    if (_port(a) in ports) != (_port(b) in ports):
        return (b, a) if _port(a) in ports else (a, b)
    a_req = _looks_like_request(conn.sides[a].first_bytes())
    b_req = _looks_like_request(conn.sides[b].first_bytes())
    if a_req != b_req:
        return (a, b) if a_req else (b, a)
    return (a, b) if _port(a) > _port(b) else (b, a)


def _port(endpoint: str) -> int:
    return int(endpoint.rpartition(":")[2] or 0)


def _looks_like_request(data: bytes) -> bool:
    """Size, api key, api version, correlation id and client id length of a request
    header; or a TLS ClientHello."""
    if looks_like_tls(data):
        return True
    if len(data) < 14:
        return False
    size, api_key, api_version, _, client_len = struct.unpack_from(">ihhih", data)
    return bool(
        10 <= size <= MAX_FRAME_SIZE
        and 0 <= api_key < 1000
        and 0 <= api_version < 100
        and -1 <= client_len <= size - 10
    )


def pcap_rows(
    paths: str | Sequence[str], broker_ports: Iterable[int] = (), keys: Keys = None
) -> list[Row]:
    """Every frame of pcap/pcapng files (one capture: a stream may span files) as rows."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    segments = [s for n, path in enumerate(paths) for s in read_segments(path, n)]
    segments.sort(key=capture_order)
    return reassemble(segments, broker_ports, keys)


def is_pcap(path: str) -> bool:
    """Whether a file is pcap or pcapng (by its magic number)."""
    with open(path, "rb") as f:
        return is_pcap_magic(f.read(4))
