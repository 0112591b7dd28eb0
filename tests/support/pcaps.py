"""Packet captures for tests: pcap and pcapng files of known frames, written with scapy.

``conversation_packets`` turns the records of one connection of a capture file (the
golden captures) into TCP segments, splitting frames over segments, reordering and
retransmitting some; ``build_pcap`` writes packets as a pcap (or pcapng) file;
``rotated_pcaps`` writes them as rotated files (``tcpdump -C``), cut in the middle of a
frame.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any, Iterable

from kafka_specgen.capture import frames as fr

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def golden_records(name: str, limit: int | None = None) -> list[dict[str, Any]]:
    with (GOLDEN / name).open(encoding="utf-8") as f:
        recs = [json.loads(line) for line in f if line.strip()]
    return recs[:limit]


def sized(frame: bytes) -> bytes:
    return struct.pack(">i", len(frame)) + frame


def tcp(
    src: tuple[str, int],
    dst: tuple[str, int],
    seq: int,
    payload: bytes = b"",
    flags: str = "PA",
    ts: float = 0.0,
) -> Any:
    from scapy.layers.inet import IP, TCP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw

    packet = (
        Ether()
        / IP(src=src[0], dst=dst[0])
        / TCP(sport=src[1], dport=dst[1], seq=seq % 2**32, flags=flags)
    )
    if payload:
        packet = packet / Raw(payload)
    packet.time = ts
    return packet


def conversation_packets(
    records: Iterable[dict[str, Any]],
    client_port: int,
    *,
    mss: int = 100,
    isn: tuple[int, int] = (1000, 5000),
    handshake: bool = True,
    mess: bool = True,
) -> list[Any]:
    """Packets carrying ``records`` (one connection) as TCP segments of ``mss`` bytes.

    ``mess``: in every frame of 3+ segments the first two are swapped (out of order) and the
    first one is sent again after the frame (a retransmission)."""
    client, broker = ("127.0.0.1", client_port), ("127.0.0.2", 9092)
    seq = {"request": isn[0] + 1, "response": isn[1] + 1}
    out = []
    records = list(records)
    if handshake:
        ts = records[0]["ts"] - 0.001
        out.append(tcp(client, broker, isn[0], flags="S", ts=ts))
        out.append(tcp(broker, client, isn[1], flags="SA", ts=ts))
    for rec in records:
        wire = sized(bytes.fromhex(rec["frame"]))
        src, dst = (client, broker) if rec["dir"] == "request" else (broker, client)
        segments = [(seq[rec["dir"]] + i, wire[i : i + mss]) for i in range(0, len(wire), mss)]
        seq[rec["dir"]] += len(wire)
        if mess and len(segments) >= 3:
            segments[0], segments[1] = segments[1], segments[0]
            segments.append(segments[1])  # the frame's first segment, again
        out += [tcp(src, dst, s, data, ts=rec["ts"]) for s, data in segments]
    return out


def build_pcap(path: Path, conversations: list[list[Any]], ng: bool = False) -> Path:
    from scapy.utils import PcapNgWriter, PcapWriter

    writer = PcapNgWriter(str(path)) if ng else PcapWriter(str(path))
    for packets in conversations:
        for packet in packets:
            writer.write(packet)
    writer.close()
    return path


def rotated_pcaps(folder: Path, conversations: list[list[Any]], mss: int = 100) -> list[Path]:
    """The packets in time order as two files ``cap0.pcap`` and ``cap1.pcap``, the second
    starting in the middle of a frame: after a full segment (``mss`` bytes), with the next
    segment of the same direction."""
    packets = sorted((p for conv in conversations for p in conv), key=lambda p: float(p.time))

    def tcp_of(i: int) -> tuple[Any, Any, int]:
        layer = packets[i]["TCP"]
        return layer.sport, layer.dport, len(layer.payload)

    cut = next(
        i
        for i in range(len(packets) // 2, len(packets))
        if tcp_of(i - 1)[2] == mss and tcp_of(i)[:2] == tcp_of(i - 1)[:2] and tcp_of(i)[2]
    )
    return [
        build_pcap(folder / "cap0.pcap", [packets[:cut]]),
        build_pcap(folder / "cap1.pcap", [packets[cut:]]),
    ]


def key(row: fr.Row) -> tuple[Any, ...]:
    """A row without the connection's name and addresses (they differ between formats)."""
    return (
        round(row.ts or 0, 6),
        row.direction,
        row.api_key,
        row.api_version,
        row.correlation_id,
        row.client_id,
        row.frame,
        row.error,
    )


def by_conn(records: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    conns: dict[int, list[dict[str, Any]]] = {}
    for rec in records:
        conns.setdefault(rec["conn"], []).append(rec)
    return conns
