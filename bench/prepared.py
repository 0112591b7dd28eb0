"""The cases made ready to time: each built in our package and in the peers, checked byte
for byte (and value for value) before anything is timed, as one call per implementation and
op; a frame set as one call per body, cut into parts by which peers take part."""

from __future__ import annotations

import copy
import io
from collections import Counter
from typing import Any, Callable

from bench.cases import Case, Frames, FrameSet
from bench.common import OURS, PEERS
from bench.sides import Side
from bench.peers import Inexpressible, Unsupported


class Prepared:
    def __init__(self, case: Case) -> None:
        self.case = case
        self.encoders: dict[str, Callable[[], Any]] = {}
        self.decoders: dict[str, Callable[[], Any]] = {}
        self.excluded: dict[str, str] = {}
        self.identical: dict[str, bool] = {}
        self.size = 0
        self.wire = b""


def prepare(case: Case, side: Side, peers: dict[str, Any]) -> Prepared:
    prep = Prepared(case)
    message, cls = side.message_class(case.message)
    version = case.version
    obj = case.build(cls)
    peer_objs: dict[str, Any] = {}
    for name, peer in peers.items():
        try:
            peer_objs[name] = peer.to_peer(obj, cls, message, version)
        except (Unsupported, Inexpressible) as exc:
            prep.excluded[name] = f"cannot express it: {exc}"
    ours = obj.encode(version)  # after to_peer, which may project values in place
    if cls.decode(ours, version) != obj:
        raise SystemExit(f"{case.id}: our own decode does not give the message back")
    prep.wire, prep.size = ours, len(ours)
    prep.encoders["ours"], prep.decoders["ours"] = ours_codecs(cls, obj, version, ours)
    if side.compiled:
        _, ccls = side.message_class(case.message, side.compiled)
        cobj = case.build(ccls)
        prep.encoders["ours_compiled"], prep.decoders["ours_compiled"] = compiled_codecs(
            case.id, side.compiled, ccls, cobj, obj, version, ours
        )
    for name, kobj in peer_objs.items():
        peer = peers[name]
        theirs = peer.encode(kobj, version)
        prep.identical[name] = theirs == ours
        if theirs != ours:
            prep.excluded[name] = _different_bytes(theirs, ours)
            continue
        problem = decode_problem(peer, obj, cls, message, version, ours)
        if problem is not None:
            prep.excluded[name] = problem
            prep.identical[name] = False
            continue
        prep.encoders[name] = peer_encoder(name, peer, kobj, version)
        prep.decoders[name] = peer_decoder(name, peer, message, version, ours)
    return prep


def _different_bytes(theirs: bytes, ours: bytes) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), min(len(theirs), len(ours))
    )
    return f"different bytes ({len(theirs)} vs our {len(ours)}, first difference at offset {at})"


def decode_problem(
    peer: Any, obj: Any, cls: Any, message: Any, version: int, wire: bytes
) -> str | None:
    """None if the peer decodes ``wire`` to ``obj``'s values, else what went wrong."""
    try:
        back = peer.from_peer(peer.decode(message, version, wire), cls, message, version)
    except Unsupported as exc:
        return f"cannot express it: {exc}"
    except Exception as exc:  # a peer's decode failure is a finding to report
        return f"cannot decode our bytes: {exc!r}"
    return None if back == obj else "decodes our bytes to other values"


def compiled_codecs(
    what: str, package: str, ccls: Any, cobj: Any, obj: Any, version: int, wire: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The mypyc build's codecs for one message, once the build gives exactly what the
    pure-Python build gives: the same bytes for the same values (``cobj`` holds ``obj``'s),
    and the same values back from them. Anything else is a bug in the compiled build, and
    stops the run."""
    theirs = cobj.encode(version)
    if theirs != wire:
        raise SystemExit(
            f"{what}: the mypyc build ({package}) encodes other bytes than the "
            f"pure-Python build ({len(theirs)} vs {len(wire)}): a bug in the compiled build"
        )
    back = ccls.decode(wire, version)
    # The two builds' classes differ, so compare them through their plain-data form.
    if back != cobj or back.to_dict() != obj.to_dict():
        raise SystemExit(
            f"{what}: the mypyc build ({package}) decodes our bytes to other values "
            "than the pure-Python build: a bug in the compiled build"
        )
    return (lambda: cobj.encode(version)), (lambda: ccls.decode(wire, version))


def peer_encoder(name: str, peer: Any, kobj: Any, version: int) -> Callable[[], Any]:
    """The peer's own fastest public encode path, resolved once (not the test adapters)."""
    if name == "kio":
        writer = peer.entity_writer(type(kobj))

        def kio_encode() -> bytes:
            buf = io.BytesIO()
            writer(buf, kobj)
            return buf.getvalue()

        return kio_encode
    return lambda: kobj.encode(version=version)


def peer_decoder(
    name: str, peer: Any, message: Any, version: int, wire: bytes
) -> Callable[[], Any]:
    """The peer's own fastest public decode path, resolved once (not the test adapters)."""
    kcls = peer.lookup(message, version)
    if name == "kio":
        reader = peer.entity_reader(kcls)
        return lambda: reader(wire, 0)
    # ApiMessage.decode, not ApiVersionsResponse's override (which re-reads error responses
    # at v0); for every other class they are the same function.
    decode = peer.ApiMessage.decode.__func__
    return lambda: decode(kcls, wire, version=version)


# --- frame sets: many messages, one pass over them per op ----------------------------------

OPS = ("encode", "decode")


class PreparedSet:
    """A frame set, checked body by body: per op, per implementation, one call per body it
    takes part in (``calls[op][impl]``: body index -> call), and why a peer was left out of
    the others (``left_out[op][peer]``: reason -> how many)."""

    def __init__(self, case: FrameSet, frames: Frames) -> None:
        self.case = case
        self.frames = frames
        self.size = sum(len(b.data) for b in frames.bodies)
        self.calls: dict[str, dict[str, dict[int, Callable[[], Any]]]] = {op: {} for op in OPS}
        self.left_out: dict[str, dict[str, Counter[str]]] = {op: {} for op in OPS}
        self.part_sizes: dict[str, dict[tuple[str, ...], int]] = {}
        self.timed_parts: dict[str, list[dict[str, Any]]] = {}

    def add(self, op: str, impl: str, index: int, call: Callable[[], Any]) -> None:
        self.calls[op].setdefault(impl, {})[index] = call

    def leave_out(self, op: str, peer: str, reason: str) -> None:
        self.left_out[op].setdefault(peer, Counter())[reason] += 1

    def used(self, op: str, impl: str) -> int:
        return len(self.calls[op].get(impl, {}))

    def parts(self, op: str) -> dict[tuple[str, ...], dict[str, Callable[[], None]]]:
        """The bodies cut by which peers take part in ``op`` (peers -> implementation -> a
        pass over that part's bodies): every implementation in a part does the same work."""
        groups: dict[tuple[str, ...], list[int]] = {}
        for i in range(len(self.frames.bodies)):
            key = tuple(p for p in PEERS if i in self.calls[op].get(p, {}))
            groups.setdefault(key, []).append(i)
        self.part_sizes[op] = {key: len(indices) for key, indices in groups.items()}
        return {
            key: {
                impl: _each([calls[i] for i in indices])
                for impl, calls in self.calls[op].items()
                if impl in OURS or impl in key
            }
            for key, indices in sorted(groups.items())
        }


def frame_set_entry(prep: PreparedSet, side: Side) -> dict[str, Any]:
    """results.json's entry for a frame set (its timings are added once timed)."""
    frames = prep.frames
    peers: dict[str, dict[str, Any]] = {}
    for p in PEERS:
        peers[p] = {
            "decode": prep.used("decode", p),
            "encode": prep.used("encode", p),
            "left_out": {op: dict(prep.left_out[op].get(p, {})) for op in OPS},
        }
    return {
        "kind": "frame set",
        "shape": prep.case.shape,
        "package": side.package,
        "compiled": bool(prep.calls["decode"].get("ours_compiled")),
        "bytes": prep.size,
        "identical": {},
        "excluded": {
            p: "takes part in no body" for p, r in peers.items() if not r["decode"] + r["encode"]
        },
        "frames": {
            "captured": frames.total,
            "bodies": len(frames.bodies),
            "left_out": dict(frames.left_out),
            "peers": peers,
        },
    }


def _each(calls: list[Callable[[], Any]]) -> Callable[[], None]:
    def one_pass() -> None:
        for call in calls:
            call()

    return one_pass


def prepare_set(case: FrameSet, side: Side, peers: dict[str, Any]) -> PreparedSet:
    """Check every body of a frame set with every implementation. Ours decodes and
    re-encodes each byte for byte (the loader kept only those); the mypyc build must give
    the same values and bytes; a peer takes part in decoding a body when it decodes it to
    our values, in encoding it when it holds those values (``to_peer``, unchanged) and
    writes the captured bytes."""
    prep = PreparedSet(case, side.frames(case))
    for i, body in enumerate(prep.frames.bodies):
        cls, version, wire = body.cls, body.version, body.data
        obj = cls.decode(wire, version)
        encode, decode = ours_codecs(cls, obj, version, wire)
        prep.add("encode", "ours", i, encode)
        prep.add("decode", "ours", i, decode)
        if side.compiled:
            _, ccls = side.message_class(cls.__name__, side.compiled)
            encode, decode = compiled_codecs(
                f"{case.id} {body.where}",
                side.compiled,
                ccls,
                ccls.decode(wire, version),
                obj,
                version,
                wire,
            )
            prep.add("encode", "ours_compiled", i, encode)
            prep.add("decode", "ours_compiled", i, decode)
        message = side.messages[cls.__name__]
        what = f"{cls.__name__} v{version}"
        for name, peer in peers.items():
            problem = decode_problem(peer, obj, cls, message, version, wire)
            if problem is None:
                prep.add("decode", name, i, peer_decoder(name, peer, message, version, wire))
            else:
                prep.leave_out("decode", name, f"{_reason(problem)}: {what}")
            # to_peer may project values in place: hand it a copy, and compare.
            mine = copy.deepcopy(obj)
            try:
                kobj = peer.to_peer(mine, cls, message, version)
                if mine != obj:
                    raise Inexpressible("values projected")
            except Unsupported:
                prep.leave_out("encode", name, f"not in the peer: {what}")
                continue
            except Inexpressible:
                prep.leave_out("encode", name, f"cannot hold a value: {what}")
                continue
            if peer.encode(kobj, version) != wire:
                prep.leave_out("encode", name, f"writes other bytes: {what}")
                continue
            prep.add("encode", name, i, peer_encoder(name, peer, kobj, version))
    return prep


def ours_codecs(
    cls: Any, obj: Any, version: int, wire: bytes
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Our encode of ``obj`` and decode of ``wire``, as the peers' are called (closures)."""
    return (lambda: obj.encode(version)), (lambda: cls.decode(wire, version))


def _reason(problem: str) -> str:
    """``decode_problem``'s answer, short enough to count."""
    if problem.startswith("cannot express it: "):  # Unsupported: no such message or version
        return "not in the peer"
    if problem.startswith("cannot decode"):
        return "fails to decode"
    return "decodes to other values"
