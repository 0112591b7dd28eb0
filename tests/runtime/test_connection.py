"""``connection``: the sans-IO client and server, driven by scripted broker bytes.

The broker's replies are built independently of the code under test: by hand with
``struct.pack`` where the bytes matter (KIP-511's v0 body, raw SASL tokens, frame sizes),
else from the generated message classes and ``framing``. The client's requests are read
back with ``framing.decode_request``. Time is a plain number passed in.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support import genpkg

PACKAGE = "conn_trunk"


@pytest.fixture(scope="module")
def k(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A package with every API (Kafka trunk 2024-10: Produce v0-11, SASL, ...)."""
    out = tmp_path_factory.mktemp("connection")
    pkg = genpkg.generate_package([genpkg.full_version_corpus()], out, PACKAGE)
    return namespace(pkg)


def namespace(pkg: ModuleType) -> SimpleNamespace:
    def mod(name: str) -> Any:
        return genpkg.import_module(pkg.__name__, name)

    ns = SimpleNamespace(
        C=mod("connection"),
        sasl=mod("sasl"),
        framing=mod("framing"),
        registry=mod("registry"),
        headers=mod("headers"),
        errors=mod("errors"),
        av=mod("api_versions"),
        md=mod("metadata"),
    )
    if 0 in ns.registry.API_KEYS:
        ns.produce = mod("produce")
        ns.txn = mod("add_partitions_to_txn")
        ns.hs = mod("sasl_handshake")
        ns.auth = mod("sasl_authenticate")
    return ns


# --- bytes, by hand and from the generated classes -----------------------------------------


def split(data: bytes) -> list[bytes]:
    """Size-prefixed frames -> frames (the whole input must be frames)."""
    out, pos = [], 0
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        out.append(data[pos + 4 : pos + 4 + size])
        pos += 4 + size
    assert pos == len(data)
    return out


def sent(k: SimpleNamespace, conn: Any) -> list[tuple[Any, Any]]:
    """The requests the client wrote: (header, body) each."""
    return [k.framing.decode_request(f) for f in split(conn.data_to_send())]


def prefixed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def reply(k: SimpleNamespace, header: Any, body: Any) -> bytes:
    """A response frame to ``header``'s request, at its version."""
    key, version = header.request_api_key, header.request_api_version
    response_header = k.headers.ResponseHeader(header.correlation_id)
    return prefixed(k.framing.encode_response(response_header, body, key, version))


def kip511_reply(correlation_id: int, listed: tuple[int, int] | None) -> bytes:
    """KIP-511's answer, by hand: header v0, error 35, a v0 body listing only key 18."""
    entries = b"" if listed is None else struct.pack(">hhh", 18, *listed)
    count = 0 if listed is None else 1
    return prefixed(struct.pack(">ihi", correlation_id, 35, count) + entries)


def api_versions_body(
    k: SimpleNamespace, versions: dict[int, tuple[int, int]], **extra: Any
) -> Any:
    entries = [
        k.av.ApiVersionsResponseApiVersion(key, lo, hi) for key, (lo, hi) in versions.items()
    ]
    return k.av.ApiVersionsResponse(error_code=0, api_keys=entries, **extra)


def everything(k: SimpleNamespace) -> dict[int, tuple[int, int]]:
    """A broker that supports every version of every API this package has."""
    return {key: (e.min_version, e.max_version) for key, e in k.registry.API_KEYS.items()}


def connect(
    k: SimpleNamespace, versions: dict[int, tuple[int, int]] | None = None, **options: Any
) -> Any:
    """A client through the handshake against ``versions`` (default: everything)."""
    options.setdefault("release_table", {})
    conn = k.C.ClientConnection(**options)
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    body = api_versions_body(k, versions or everything(k))
    events = conn.receive_data(reply(k, header, body), 0.0)
    assert [type(e).__name__ for e in events] == ["Ready"]
    return conn


def metadata_reply(k: SimpleNamespace, header: Any, throttle_ms: int = 0) -> bytes:
    return reply(k, header, k.md.MetadataResponse(throttle_time_ms=throttle_ms, cluster_id="c"))


def names(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


# --- the ApiVersions handshake --------------------------------------------------------------


def test_start_queues_api_versions_at_the_newest_version(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(client_id="app", client_software=("app", "1.0"))
    assert conn.data_to_send() == b""
    assert conn.start(0.0) == []
    data = conn.data_to_send()
    assert conn.data_to_send() == b""  # handed out once
    [frame] = split(data)
    newest = k.registry.API_KEYS[18].max_version
    # header v2 read by hand: api key, version, correlation id, client id (int16 string)
    key, version, cid, id_len = struct.unpack_from(">hhih", frame)
    assert (key, version, frame[10 : 10 + id_len]) == (18, newest, b"app")
    header, body = k.framing.decode_request(frame)
    assert (body.client_software_name, body.client_software_version) == ("app", "1.0")
    assert conn.state.value == "negotiating"


def test_ready_carries_versions_features_and_the_version_used(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(release_table={})
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    F = k.av
    body = api_versions_body(
        k,
        {18: (0, 4), 3: (0, 12)},
        supported_features=[F.ApiVersionsResponseSupportedFeatureKey("metadata.version", 1, 21)],
        finalized_features_epoch=7,
        finalized_features=[F.ApiVersionsResponseFinalizedFeatureKey("metadata.version", 20, 1)],
    )
    [ready] = conn.receive_data(reply(k, header, body), 0.5)
    assert isinstance(ready, k.C.Ready)
    assert ready.versions == {3: (0, 12), 18: (0, 4)}
    assert ready.api_versions_version == header.request_api_version
    assert ready.features.supported == {"metadata.version": (1, 21)}
    assert ready.features.finalized == {"metadata.version": (1, 20)}
    assert ready.features.epoch == 7
    assert ready.release_guess is None  # no table given
    assert conn.state.value == "ready" and conn.ready is ready


def test_finalized_features_count_only_with_an_epoch(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(release_table={})
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    F = k.av
    body = api_versions_body(
        k,
        {18: (0, 4)},
        finalized_features_epoch=-1,
        finalized_features=[F.ApiVersionsResponseFinalizedFeatureKey("x", 3, 1)],
    )
    [ready] = conn.receive_data(reply(k, header, body), 0.0)
    assert ready.features.finalized == {} and ready.features.epoch == -1


def test_kip511_retries_at_the_strictly_lower_version_listed(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(release_table={})
    conn.start(0.0)
    [(first, _)] = sent(k, conn)
    assert first.request_api_version == 4
    assert conn.receive_data(kip511_reply(first.correlation_id, (0, 2)), 0.1) == []
    [(second, _)] = sent(k, conn)
    assert second.request_api_version == 2
    assert second.correlation_id != first.correlation_id
    [ready] = conn.receive_data(reply(k, second, api_versions_body(k, {18: (0, 2)})), 0.2)
    assert ready.api_versions_version == 2
    assert ready.api_versions_refused == (4,)


@pytest.mark.parametrize("listed", [None, (0, 4), (0, 9)])
def test_kip511_retries_at_v0_when_the_list_does_not_explain_the_refusal(
    k: SimpleNamespace, listed: tuple[int, int] | None
) -> None:
    conn = k.C.ClientConnection(release_table={})
    conn.start(0.0)
    [(first, _)] = sent(k, conn)
    conn.receive_data(kip511_reply(first.correlation_id, listed), 0.1)
    [(second, _)] = sent(k, conn)
    assert second.request_api_version == 0
    [ready] = conn.receive_data(reply(k, second, api_versions_body(k, {18: (0, 0)})), 0.2)
    assert ready.api_versions_version == 0
    assert ready.api_versions_refused == (4,)


def test_kip511_tries_are_bounded(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection()
    conn.start(0.0)
    versions = []
    events: list[Any] = []
    for _ in range(10):
        requests = sent(k, conn)
        if not requests:
            break
        [(header, _)] = requests
        versions.append(header.request_api_version)
        events += conn.receive_data(kip511_reply(header.correlation_id, (0, 3)), 0.0)
    assert versions == [4, 3, 0]
    assert names(events) == ["ConnectionFailed"]
    assert events[0].cause is k.C.FailureCause.HANDSHAKE_FAILED
    assert "3 attempts" in events[0].reason


def test_kip511_refusal_of_v0_fails(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(policy={18: (0, 0)})
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    assert header.request_api_version == 0
    [failed] = conn.receive_data(kip511_reply(header.correlation_id, None), 0.0)
    assert failed.cause is k.C.FailureCause.HANDSHAKE_FAILED


def test_other_api_versions_errors_fail_the_handshake(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection()
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    body = k.av.ApiVersionsResponse(error_code=42)
    [failed] = conn.receive_data(reply(k, header, body), 0.0)
    assert failed.cause is k.C.FailureCause.HANDSHAKE_FAILED
    assert "INVALID_REQUEST" in failed.reason


def test_eof_during_api_versions_says_the_broker_may_predate_kip35(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection()
    conn.start(0.0)
    conn.data_to_send()
    [failed] = conn.receive_data(b"", 1.0)
    assert failed.cause is k.C.FailureCause.CLOSED_DURING_API_VERSIONS
    assert "ApiVersions" in failed.reason and "0.10" in failed.reason
    assert conn.state.value == "closed"
    assert conn.receive_data(b"\x00\x00\x00\x01x", 2.0) == []  # nothing after the end
    # The peer ended it: sending now names that cause, it is no misuse.
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        conn.send(k.md.MetadataRequest(), 2.0)
    assert raised.value.cause is k.C.FailureCause.CLOSED_DURING_API_VERSIONS
    assert raised.value.event is conn.failure
    closed = connect(k)
    closed.close()  # closed by the caller: sending is misuse
    with pytest.raises(k.C.LocalProtocolError):
        closed.send(k.md.MetadataRequest(), 2.0)


def test_configured_broker_versions_skip_the_handshake(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(broker_versions={3: (0, 7), 18: (0, 3)}, release_table={})
    [ready] = conn.start(0.0)
    assert ready.versions == {3: (0, 7), 18: (0, 3)}
    assert ready.api_versions_version is None
    assert conn.data_to_send() == b""
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    assert (header.request_api_key, header.request_api_version) == (3, 7)


def test_start_twice_and_send_before_ready_raise(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection()
    with pytest.raises(k.C.LocalProtocolError):
        conn.send(k.md.MetadataRequest(), 0.0)
    conn.start(0.0)
    with pytest.raises(k.C.LocalProtocolError):
        conn.start(0.0)
    with pytest.raises(k.C.LocalProtocolError):
        conn.send(k.md.MetadataRequest(), 0.0)


def test_client_software_is_checked_locally(k: SimpleNamespace) -> None:
    with pytest.raises(ValueError, match="client software"):
        k.C.ClientConnection(client_software=("my app", "1.0"))
    with pytest.raises(ValueError):
        k.C.ClientConnection(client_software=("app", "1.0-"))


# --- choosing versions ----------------------------------------------------------------------


def test_send_picks_the_newest_common_version(k: SimpleNamespace) -> None:
    package_max = k.registry.API_KEYS[3].max_version
    for broker, expected in [((0, 9), 9), ((0, package_max + 5), package_max), ((4, 4), 4)]:
        conn = connect(k, {18: (0, 4), 3: broker})
        cid = conn.send(k.md.MetadataRequest(topics=None), 0.0)
        [(header, body)] = sent(k, conn)
        assert (header.request_api_version, header.correlation_id) == (expected, cid)
        assert body == k.md.MetadataRequest(topics=None)


def test_policy_overlay_caps_versions_and_is_replaceable(k: SimpleNamespace) -> None:
    versions = {18: (0, 4), 24: (0, 5), 3: (0, 12)}
    conn = connect(k, versions)
    assert conn.version_for(24) == 3  # AddPartitionsToTxn v4+ is broker-only
    assert k.C.DEFAULT_POLICY[17] == (0, 1)
    mine = connect(k, versions, policy={3: (0, 5)})
    assert mine.version_for(24) == 5 and mine.version_for(3) == 5
    mine.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, mine)
    assert header.request_api_version == 5


def test_no_common_version_raises_locally_and_queues_nothing(k: SimpleNamespace) -> None:
    package_max = k.registry.API_KEYS[3].max_version
    conn = connect(k, {18: (0, 4), 3: (package_max + 1, package_max + 3)})
    with pytest.raises(k.errors.UnsupportedVersionError) as raised:
        conn.send(k.md.MetadataRequest(topics=None), 0.0)
    assert isinstance(raised.value, k.C.NoCommonVersionError)
    assert raised.value.broker_too_old is False  # the client is the obsolete one here
    old = connect(k, {18: (0, 4)})  # a broker without Metadata at all
    with pytest.raises(k.C.NoCommonVersionError) as raised:
        old.send(k.md.MetadataRequest(topics=None), 0.0)
    assert raised.value.broker_too_old and "obsolete broker" in str(raised.value)
    assert conn.data_to_send() == old.data_to_send() == b""
    assert conn.in_flight == conn.queued == 0


def test_version_forces_a_version(k: SimpleNamespace) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 12)})
    conn.send(k.md.MetadataRequest(topics=None), 0.0, version=1)
    [(header, _)] = sent(k, conn)
    assert header.request_api_version == 1


def test_unstable_latest_versions_need_version(k: SimpleNamespace) -> None:
    unstable = [e for e in k.registry.API_KEYS.values() if e.latest_version_unstable]
    if not unstable:
        pytest.skip("this corpus marks no version unstable")
    entry = unstable[0]
    conn = connect(k)
    if entry.max_version > entry.min_version:
        assert conn.version_for(entry.api_key) == entry.max_version - 1
    else:
        with pytest.raises(k.errors.UnsupportedVersionError, match="unstable"):
            conn.version_for(entry.api_key)


def test_only_requests_of_this_package_are_sent(k: SimpleNamespace) -> None:
    conn = connect(k)
    with pytest.raises(k.errors.UnsupportedVersionError):
        conn.send(k.md.MetadataResponse(), 0.0)
    with pytest.raises(k.errors.EncodeError):  # a value version 0 cannot carry
        conn.send(k.md.MetadataRequest(topics=None), 0.0, version=0)
    assert conn.data_to_send() == b""


# --- responses ------------------------------------------------------------------------------


def test_response_is_decoded_at_the_version_sent_and_typed(k: SimpleNamespace) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 9)})
    request = k.md.MetadataRequest(topics=None)
    cid = conn.send(request, 1.0)
    [(header, _)] = sent(k, conn)
    [event] = conn.receive_data(metadata_reply(k, header), 1.25)
    assert isinstance(event, k.C.Response)
    assert (event.correlation_id, event.api_version, event.api_key) == (cid, 9, 3)
    assert event.request is request
    assert event.response == k.md.MetadataResponse(cluster_id="c")
    assert event.latency == pytest.approx(0.25)
    assert event.response_for(k.md.MetadataRequest) is event.response
    assert event.response_for(k.av.ApiVersionsRequest) is None


def test_one_byte_at_a_time(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(release_table={})
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    stream = reply(k, header, api_versions_body(k, everything(k)))
    events: list[Any] = []
    for i in range(len(stream)):
        events += conn.receive_data(stream[i : i + 1], 0.0)
        assert conn.buffered == (i + 1) % len(stream)
    assert names(events) == ["Ready"]
    cids = [conn.send(k.md.MetadataRequest(topics=None), 0.0) for _ in range(3)]
    stream = b"".join(metadata_reply(k, h) for h, _ in sent(k, conn))
    events = []
    for i in range(len(stream)):
        events += conn.receive_data(stream[i : i + 1], 0.0)
    assert [e.correlation_id for e in events] == cids


def test_pipelining_and_the_in_flight_limit(k: SimpleNamespace) -> None:
    conn = connect(k, max_in_flight=2)
    cids = [conn.send(k.md.MetadataRequest(topics=None), 0.0) for _ in range(5)]
    assert len(set(cids)) == 5
    first = sent(k, conn)
    assert [h.correlation_id for h, _ in first] == cids[:2]
    assert (conn.in_flight, conn.queued) == (2, 3)
    assert conn.awaiting(cids[4]) and not conn.awaiting(999)
    # one answer makes room for one more request, written at once
    [event] = conn.receive_data(metadata_reply(k, first[0][0]), 1.0)
    assert event.correlation_id == cids[0]
    second = sent(k, conn)
    assert [h.correlation_id for h, _ in second] == [cids[2]]
    # two answers in one chunk: two events, in order, and two more requests go out
    chunk = metadata_reply(k, first[1][0]) + metadata_reply(k, second[0][0])
    events = conn.receive_data(chunk, 2.0)
    assert [e.correlation_id for e in events] == [cids[1], cids[2]]
    assert [e.latency for e in events] == [2.0, 1.0]
    assert [h.correlation_id for h, _ in sent(k, conn)] == cids[3:]
    assert (conn.in_flight, conn.queued) == (2, 0)


def test_acks0_produce_expects_no_response_and_an_unsolicited_one_is_dropped(
    k: SimpleNamespace,
) -> None:
    conn = connect(k)
    produce = k.produce.ProduceRequest(acks=0, timeout_ms=1000)
    assert k.C.expects_response(produce) is False
    cid = conn.send(produce, 0.0)
    [(header, body)] = sent(k, conn)
    assert body.acks == 0 and header.correlation_id == cid
    assert conn.in_flight == 0 and conn.next_deadline() is None
    assert not conn.awaiting(cid)
    assert conn.handle_timer(1000.0) == []  # no deadline for it
    # Azure Event Hubs answers anyway: dropped, the connection goes on
    answer = reply(k, header, k.produce.ProduceResponse())
    assert conn.receive_data(answer, 1.0) == []
    assert conn.state.value == "ready"
    # ... but only once: a second copy is a response nobody asked for
    [failed] = conn.receive_data(answer, 1.0)
    assert failed.cause is k.C.FailureCause.UNKNOWN_CORRELATION_ID


# --- protocol violations --------------------------------------------------------------------


def test_unknown_correlation_id_fails_once(k: SimpleNamespace) -> None:
    conn = connect(k)
    cid = conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    header.correlation_id = cid + 100
    events = conn.receive_data(metadata_reply(k, header) * 2, 0.0)
    assert names(events) == ["ConnectionFailed"]
    assert events[0].cause is k.C.FailureCause.UNKNOWN_CORRELATION_ID
    assert str(cid + 100) in events[0].reason
    assert events[0].unanswered == (cid,)
    assert conn.state.value == "closed" and conn.data_to_send() == b""


@pytest.mark.parametrize("size", [101, 1 << 30, -1, -(1 << 31)])
def test_oversized_frame_is_refused_from_its_size_alone(k: SimpleNamespace, size: int) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 12)}, max_frame_size=100)
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    conn.data_to_send()
    assert conn.receive_data(struct.pack(">i", size)[:3], 0.0) == []
    [failed] = conn.receive_data(struct.pack(">i", size)[3:], 0.0)  # no body sent at all
    assert failed.cause is k.C.FailureCause.FRAME_TOO_LARGE
    assert str(size) in failed.reason
    assert conn.buffered == 0


def test_a_frame_of_exactly_the_limit_is_read(k: SimpleNamespace) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 12)})
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    answer = metadata_reply(k, header)
    limited = k.C.ClientConnection(broker_versions={3: (0, 12)}, max_frame_size=len(answer) - 4)
    limited.start(0.0)
    limited.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, limited)
    assert names(limited.receive_data(metadata_reply(k, header), 0.0)) == ["Response"]


@pytest.mark.parametrize("cut", [0, 2, 5])
def test_bytes_that_do_not_decode(k: SimpleNamespace, cut: int) -> None:
    conn = connect(k)
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    frame = split(metadata_reply(k, header))[0]
    broken = frame[: 4 + cut] if cut else frame + b"\x00"  # cut short, or a trailing byte
    [failed] = conn.receive_data(prefixed(broken), 0.0)
    assert failed.cause is k.C.FailureCause.UNDECODABLE
    assert "Metadata" in failed.reason


def test_tiny_frames_and_garbage_during_the_handshake(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection()
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    [failed] = conn.receive_data(prefixed(b"\x00\x00"), 0.0)
    assert failed.cause is k.C.FailureCause.UNDECODABLE
    conn = k.C.ClientConnection()
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    garbage = struct.pack(">i", header.correlation_id) + b"\x00\x00\xff\xff\xff\xff"
    [failed] = conn.receive_data(prefixed(garbage), 0.0)
    assert failed.cause is k.C.FailureCause.UNDECODABLE


def test_peer_close_with_and_without_requests_outstanding(k: SimpleNamespace) -> None:
    idle = connect(k)
    assert names(idle.receive_data(b"", 1.0)) == ["ConnectionClosed"]
    busy = connect(k)
    cid = busy.send(k.md.MetadataRequest(topics=None), 0.0)
    [failed] = busy.receive_data(b"", 1.0)
    assert failed.cause is k.C.FailureCause.CLOSED and failed.unanswered == (cid,)
    partial = connect(k)
    assert partial.receive_data(b"\x00\x00", 1.0) == []
    [failed] = partial.receive_data(b"", 1.0)
    assert failed.cause is k.C.FailureCause.CLOSED and "2 bytes" in failed.reason


# --- time -----------------------------------------------------------------------------------


def test_request_timeout_then_the_connection_closes(k: SimpleNamespace) -> None:
    conn = connect(k, request_timeout=5.0)
    a = conn.send(k.md.MetadataRequest(topics=None), 10.0)
    b = conn.send(k.md.MetadataRequest(topics=None), 12.0, timeout=1.0)
    c = conn.send(k.md.MetadataRequest(topics=None), 12.5)
    assert conn.next_deadline() == 13.0
    assert conn.handle_timer(12.9) == []
    events = conn.handle_timer(13.0)
    assert names(events) == ["RequestTimedOut", "ConnectionFailed"]
    assert events[0].correlation_id == b and events[0].elapsed == 1.0
    assert events[1].cause is k.C.FailureCause.TIMED_OUT
    assert events[1].unanswered == (a, c)
    assert conn.state.value == "closed" and conn.next_deadline() is None
    assert conn.handle_timer(100.0) == []


def test_a_response_in_time_clears_the_deadline(k: SimpleNamespace) -> None:
    conn = connect(k, request_timeout=5.0)
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    conn.receive_data(metadata_reply(k, header), 4.0)
    assert conn.next_deadline() is None
    assert conn.handle_timer(50.0) == []


def test_handshake_timeout(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(request_timeout=2.0)
    conn.start(1.0)
    assert conn.next_deadline() == 3.0
    [failed] = conn.handle_timer(3.0)
    assert failed.cause is k.C.FailureCause.TIMED_OUT and "ApiVersions" in failed.reason


def test_throttle_pauses_sending_until_it_ends(k: SimpleNamespace) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 12)})
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    events = conn.receive_data(metadata_reply(k, header, throttle_ms=1500), 1.0)
    assert names(events) == ["Response", "Throttled"]
    assert (events[1].throttle_time_ms, events[1].until) == (1500, 2.5)
    assert conn.throttled_until == 2.5
    cid = conn.send(k.md.MetadataRequest(topics=None), 1.5)  # queued, not written
    assert conn.data_to_send() == b"" and conn.queued == 1 and conn.awaiting(cid)
    assert conn.next_deadline() == 2.5
    assert conn.handle_timer(2.4) == [] and conn.data_to_send() == b""
    assert conn.handle_timer(2.5) == []
    [(header, _)] = sent(k, conn)
    assert header.correlation_id == cid and conn.throttled_until is None
    assert conn.next_deadline() == 1.5 + conn.request_timeout  # its deadline began at send


def test_no_client_side_throttle_before_kip219(k: SimpleNamespace) -> None:
    # Metadata below v6: the broker held the response back itself, so no second wait.
    conn = connect(k, {18: (0, 4), 3: (0, 5)})
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    assert header.request_api_version == 5
    events = conn.receive_data(metadata_reply(k, header, throttle_ms=1500), 1.0)
    assert names(events) == ["Response"]
    conn.send(k.md.MetadataRequest(topics=None), 1.0)
    assert len(sent(k, conn)) == 1


def test_throttle_and_in_flight_limit_are_separate_pauses(k: SimpleNamespace) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 12)}, max_in_flight=1)
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(first, _)] = sent(k, conn)
    assert conn.queued == 1  # paused by the limit, not throttled
    assert conn.throttled_until is None and conn.next_deadline() == conn.request_timeout
    conn.receive_data(metadata_reply(k, first, throttle_ms=1000), 1.0)
    # room in flight now, but throttled: still queued
    assert conn.in_flight == 0 and conn.queued == 1 and conn.data_to_send() == b""
    conn.handle_timer(2.0)
    assert len(sent(k, conn)) == 1


# --- SASL -----------------------------------------------------------------------------------


class Broker:
    """A scripted broker on ``ServerConnection``: ApiVersions (with KIP-511), SaslHandshake,
    SaslAuthenticate or raw tokens, Metadata. ``mechanisms`` maps a mechanism name to a
    server from ``sasl`` (``PlainServer``, ``ScramServer``); requests with an api key in
    ``ignore`` get no answer."""

    def __init__(
        self,
        k: SimpleNamespace,
        versions: dict[int, tuple[int, int]],
        mechanisms: dict[str, Any] | None = None,
        ignore: tuple[int, ...] = (),
        session_lifetime_ms: int = 60000,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.k = k
        self.ignore = ignore
        self.session_lifetime_ms = session_lifetime_ms
        self.clock = clock
        """With a clock, a request after the session's end closes the connection, as
        Kafka does (KIP-368)."""
        self.session_ends: float | None = None
        self.logins = 0
        self.versions = versions
        self.mechanisms = mechanisms or {}
        self.conn = k.C.ServerConnection()
        self.exchange: Any = None
        self.closed = False
        self.seen: list[Any] = []

    def feed(self, data: bytes) -> bytes:
        k, C = self.k, self.k.C
        for event in self.conn.receive_data(data):
            self.seen.append(event)
            if isinstance(event, C.SaslTokenReceived):
                try:
                    answer = self.exchange.respond(event.token)
                except k.sasl.SaslError:
                    self.closed = True  # before KIP-152 a failed login just closes
                    return b""
                self.conn.send_sasl_token(answer, last=self.exchange.complete)
            elif not isinstance(event, C.RequestReceived):
                self.closed = True
            elif event.api_key in self.ignore:
                pass
            elif event.api_key == 18:
                self.conn.send_api_versions(event, self.versions)
            elif event.api_key == 17:
                server = self.mechanisms.get(event.request.mechanism)
                self.exchange = None if server is None else server.start()
                code = 0 if server is not None else 33
                body = k.hs.SaslHandshakeResponse(code, sorted(self.mechanisms))
                self.conn.send_response(event, body)
            elif event.api_key == 36:
                try:
                    answer = self.exchange.respond(event.request.auth_bytes)
                except k.sasl.SaslError as exc:
                    body = k.auth.SaslAuthenticateResponse(error_code=58, error_message=str(exc))
                else:
                    body = k.auth.SaslAuthenticateResponse(
                        auth_bytes=answer, session_lifetime_ms=self.session_lifetime_ms
                    )
                    if self.exchange.complete:
                        self.logins += 1
                        if self.clock is not None:
                            lifetime = self.session_lifetime_ms / 1000
                            self.session_ends = self.clock() + lifetime
                self.conn.send_response(event, body)
            elif event.api_key == 3:
                if self.session_ends is not None and self.clock is not None:
                    if self.clock() > self.session_ends:
                        self.closed = True  # the session expired: Kafka closes
                        return b""
                self.conn.send_response(event, k.md.MetadataResponse(cluster_id="scripted"))
        return bytes(self.conn.data_to_send())


def converse(client: Any, broker: Broker, now: float = 0.0) -> list[Any]:
    """Pass bytes both ways until both are quiet (bounded)."""
    events: list[Any] = []
    for _ in range(20):
        out = client.data_to_send()
        if not out:
            return events
        answer = broker.feed(out)
        if answer:
            events += client.receive_data(answer, now)
        if broker.closed:
            return events + client.receive_data(b"", now)
    raise AssertionError("the conversation did not end")


def scram_server(k: SimpleNamespace, name: str, hash_name: str, password: str = "pencil") -> Any:
    credential = k.sasl.ScramCredential.from_password(password, hash_name, b"salt" * 4, 4096)
    return k.sasl.ScramServer(name, hash_name, lambda user: credential if user == "u" else None)


def sasl_servers(k: SimpleNamespace) -> dict[str, Any]:
    return {
        "PLAIN": k.sasl.PlainServer(lambda u, p: (u, p) == ("u", "pencil")),
        "SCRAM-SHA-256": scram_server(k, "SCRAM-SHA-256", "sha256"),
        "SCRAM-SHA-512": scram_server(k, "SCRAM-SHA-512", "sha512"),
    }


def mechanism(k: SimpleNamespace, name: str, password: str = "pencil") -> Any:
    return {
        "PLAIN": k.sasl.Plain,
        "SCRAM-SHA-256": k.sasl.ScramSha256,
        "SCRAM-SHA-512": k.sasl.ScramSha512,
    }[name]("u", password)


MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


@pytest.mark.parametrize("handshake", [0, 1])
@pytest.mark.parametrize("name", MECHANISMS)
def test_sasl_login(k: SimpleNamespace, name: str, handshake: int) -> None:
    versions = everything(k) | {17: (0, handshake)}
    broker = Broker(k, versions, sasl_servers(k))
    conn = k.C.ClientConnection(sasl=mechanism(k, name), release_table={})
    conn.start(0.0)
    events = converse(conn, broker)
    assert names(events) == ["Ready"], events
    assert events[0].sasl_mechanism == name
    assert events[0].session_lifetime_ms == (60000 if handshake else 0)
    used = [e.api_key for e in broker.seen if isinstance(e, k.C.RequestReceived)]
    tokens = [e for e in broker.seen if isinstance(e, k.C.SaslTokenReceived)]
    expected_tokens = 1 if name == "PLAIN" else 2
    if handshake:  # KIP-152: tokens inside SaslAuthenticate requests
        assert used == [18, 17] + [36] * expected_tokens and tokens == []
    else:  # before it: raw tokens after the v0 handshake
        assert used == [18, 17] and len(tokens) == expected_tokens
    conn.send(k.md.MetadataRequest(topics=None), 1.0)
    [response] = converse(conn, broker, 1.0)
    assert response.response.cluster_id == "scripted"


def test_raw_plain_token_bytes(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(
        sasl=k.sasl.Plain("alice", "secret"), broker_versions=everything(k) | {17: (0, 0)}
    )
    assert conn.start(0.0) == []
    [(header, body)] = sent(k, conn)
    assert (header.request_api_key, header.request_api_version, body.mechanism) == (17, 0, "PLAIN")
    handshake = reply(k, header, k.hs.SaslHandshakeResponse(0, ["PLAIN"]))
    assert conn.receive_data(handshake, 0.0) == []
    # the token alone behind a size prefix: no request header (KIP-43)
    assert conn.data_to_send() == struct.pack(">i", 13) + b"\x00alice\x00secret"
    [ready] = conn.receive_data(struct.pack(">i", 0), 0.0)  # the server's empty token
    assert isinstance(ready, k.C.Ready)


@pytest.mark.parametrize("handshake", [0, 1])
@pytest.mark.parametrize("name", MECHANISMS)
def test_sasl_wrong_password_fails(k: SimpleNamespace, name: str, handshake: int) -> None:
    broker = Broker(k, everything(k) | {17: (0, handshake)}, sasl_servers(k))
    conn = k.C.ClientConnection(sasl=mechanism(k, name, password="wrong"))
    conn.start(0.0)
    events = converse(conn, broker)
    assert names(events) == ["ConnectionFailed"]
    assert events[0].cause is k.C.FailureCause.AUTHENTICATION_FAILED


def test_sasl_mechanism_the_broker_lacks(k: SimpleNamespace) -> None:
    broker = Broker(k, everything(k), {"PLAIN": sasl_servers(k)["PLAIN"]})
    conn = k.C.ClientConnection(sasl=mechanism(k, "SCRAM-SHA-512"))
    conn.start(0.0)
    [failed] = converse(conn, broker)
    assert failed.cause is k.C.FailureCause.AUTHENTICATION_FAILED
    assert "UNSUPPORTED_SASL_MECHANISM" in failed.reason and "PLAIN" in failed.reason


def test_scram_client_checks_the_server_signature(k: SimpleNamespace) -> None:
    # A server that knows another password for "u" cannot produce the right signature; the
    # client notices even though the (lying) server says error 0.
    class Liar:
        def __init__(self) -> None:
            self.inner = scram_server(k, "SCRAM-SHA-256", "sha256").start()

        def respond(self, message: bytes) -> bytes:
            if message.startswith(b"c="):
                return b"v=" + b"A" * 44
            return bytes(self.inner.respond(message))

        complete = False

    class LiarServer:
        def start(self) -> Liar:
            return Liar()

    broker = Broker(k, everything(k), {"SCRAM-SHA-256": LiarServer()})
    conn = k.C.ClientConnection(sasl=mechanism(k, "SCRAM-SHA-256"))
    conn.start(0.0)
    [failed] = converse(conn, broker)
    assert failed.cause is k.C.FailureCause.AUTHENTICATION_FAILED
    assert "signature" in failed.reason


def test_eof_during_sasl(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(sasl=mechanism(k, "PLAIN"), broker_versions=everything(k))
    conn.start(0.0)
    [failed] = conn.receive_data(b"", 0.0)
    assert failed.cause is k.C.FailureCause.AUTHENTICATION_FAILED


def test_raw_sasl_token_timeout(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(
        sasl=mechanism(k, "PLAIN"), broker_versions=everything(k) | {17: (0, 0)}, request_timeout=3
    )
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    conn.receive_data(reply(k, header, k.hs.SaslHandshakeResponse(0, ["PLAIN"])), 1.0)
    assert conn.next_deadline() == 4.0
    [failed] = conn.handle_timer(4.0)
    assert failed.cause is k.C.FailureCause.TIMED_OUT


# --- the server side ------------------------------------------------------------------------


def test_server_decodes_requests_and_answers_at_their_version(k: SimpleNamespace) -> None:
    server = k.C.ServerConnection()
    request = k.md.MetadataRequest(topics=None)
    header = k.headers.RequestHeader(3, 12, 77, "app")
    frame = k.framing.encode_request(header, request)
    [event] = server.receive_data(prefixed(frame)[:5]) + server.receive_data(prefixed(frame)[5:])
    assert isinstance(event, k.C.RequestReceived)
    assert (event.correlation_id, event.api_key, event.api_version) == (77, 3, 12)
    assert event.header.client_id == "app" and event.request == request
    assert event.frame == frame and event.expects_response
    response = k.md.MetadataResponse(cluster_id="c")
    server.send_response(event, response)
    data = server.data_to_send()
    # response header v1 by hand: correlation id and an empty tag section, then the body
    assert data == prefixed(struct.pack(">i", 77) + b"\x00" + response.encode(12))
    with pytest.raises(k.C.LocalProtocolError):
        server.send_response(event, response)  # answered already


def test_server_answers_a_too_new_api_versions_the_kip511_way(k: SimpleNamespace) -> None:
    newest = k.registry.API_KEYS[18].max_version
    for version in (3, newest + 1):  # above the emulated broker's range; above the package's
        server = k.C.ServerConnection()
        body = b"\x00" if version >= 3 else b""  # what follows the header is never read
        header = struct.pack(">hhih", 18, version, 5, 3) + b"app" + b"\x00"
        [event] = server.receive_data(prefixed(header + b"\x04abc\x02x" + body))
        assert event.api_version == version
        assert (event.request is None) == (version > newest)
        server.send_api_versions(event, {18: (0, 2), 3: (0, 9)})
        assert server.data_to_send() == kip511_reply(5, (0, 2))


def test_server_api_versions_in_range_lists_everything(k: SimpleNamespace) -> None:
    server = k.C.ServerConnection()
    frame = k.framing.encode_request(
        k.headers.RequestHeader(18, 2, 9, "x"), k.av.ApiVersionsRequest()
    )
    [event] = server.receive_data(prefixed(frame))
    server.send_api_versions(event, {3: (0, 9), 18: (0, 3)}, throttle_time_ms=5)
    expected = struct.pack(">ihi", 9, 0, 2) + struct.pack(">hhhhhh", 3, 0, 9, 18, 0, 3)
    assert server.data_to_send() == prefixed(expected + struct.pack(">i", 5))


def test_server_violations_and_close(k: SimpleNamespace) -> None:
    server = k.C.ServerConnection(max_frame_size=64)
    [failed] = server.receive_data(struct.pack(">i", 65))
    assert failed.cause is k.C.FailureCause.FRAME_TOO_LARGE and server.closed
    server = k.C.ServerConnection()
    [failed] = server.receive_data(prefixed(struct.pack(">hhih", 9999, 0, 1, 0)))
    assert failed.cause is k.C.FailureCause.UNDECODABLE and "9999" in failed.reason
    server = k.C.ServerConnection()
    assert names(server.receive_data(b"")) == ["ConnectionClosed"]
    server = k.C.ServerConnection()
    server.receive_data(b"\x00\x00\x00\x09abc")
    assert names(server.receive_data(b"")) == ["ConnectionFailed"]


def test_server_takes_reused_correlation_ids_and_trailing_bytes(k: SimpleNamespace) -> None:
    """Kafka's brokers echo a correlation id back whatever it is, and read a request's fields
    without looking at what follows them: so does the server side."""
    server = k.C.ServerConnection()
    metadata = k.framing.encode_request(
        k.headers.RequestHeader(3, 12, 7, "a"), k.md.MetadataRequest(topics=None)
    )
    versions = k.framing.encode_request(
        k.headers.RequestHeader(18, 2, 7, "a"), k.av.ApiVersionsRequest()
    )
    events = server.receive_data(prefixed(metadata + b"\x00\x00\x00") + prefixed(versions))
    assert [(e.api_key, e.correlation_id) for e in events] == [(3, 7), (18, 7)]
    server.send_response(7, k.md.MetadataResponse(cluster_id="c"))  # the oldest: v12
    server.send_api_versions(events[1], {18: (0, 2)})
    data = server.data_to_send()
    first = struct.unpack_from(">i", data)[0] + 4
    assert k.framing.decode_response(data[4:first], 3, 12)[1].cluster_id == "c"
    assert k.framing.decode_response(data[first + 4 :], 18, 2)[1].api_keys[0].max_version == 2
    with pytest.raises(k.C.LocalProtocolError):
        server.send_response(7, k.md.MetadataResponse())  # both answered
    with pytest.raises(k.errors.DecodeError, match="3 trailing bytes"):
        k.framing.decode_request(metadata + b"\x00\x00\x00")  # strict by default


def test_server_parts_to_send_are_the_frames_unjoined(k: SimpleNamespace) -> None:
    server = k.C.ServerConnection()
    frame = k.framing.encode_request(
        k.headers.RequestHeader(3, 12, 5, "a"), k.md.MetadataRequest(topics=None)
    )
    [event] = server.receive_data(prefixed(frame))
    response = k.md.MetadataResponse(cluster_id="c")
    server.send_response(event, response)
    head, body = server.parts_to_send()  # the size and header, then the body as encoded
    assert body == response.encode(12) and server.data_to_send() == b""
    header = k.headers.ResponseHeader(5)
    assert head + body == prefixed(k.framing.encode_response(header, response, 3, 12))


def test_server_acks0_produce_expects_no_response(k: SimpleNamespace) -> None:
    server = k.C.ServerConnection()
    request = k.produce.ProduceRequest(acks=0, timeout_ms=10)
    frame = k.framing.encode_request(k.headers.RequestHeader(0, 9, 4, "p"), request)
    [event] = server.receive_data(prefixed(frame))
    assert event.expects_response is False
    with pytest.raises(k.C.LocalProtocolError):
        server.send_response(4, k.produce.ProduceResponse())
    server.send_response(event, k.produce.ProduceResponse())  # emulating Event Hubs is allowed
    assert server.data_to_send()


def test_client_and_server_with_an_old_release(k: SimpleNamespace) -> None:
    releases = genpkg.import_module(PACKAGE, "releases").BROKER_RELEASES
    versions = dict(releases["2.4.0"])
    broker = Broker(k, versions)
    conn = k.C.ClientConnection()  # the package's own release table
    conn.start(0.0)
    [ready] = converse(conn, broker)
    assert ready.api_versions_version == versions[18][1]  # after the KIP-511 retry
    assert [e.api_version for e in broker.seen] == [4, versions[18][1]]
    assert str(ready.release_guess) == "2.4.0"


# --- the release guess ----------------------------------------------------------------------

TABLE = {
    "1.0": {0: (0, 5), 1: (0, 6), 9: (0, 1)},
    "2.0": {0: (0, 6), 1: (0, 7), 9: (0, 1), 20: (0, 0)},
    "3.0": {0: (0, 7), 1: (0, 8), 20: (0, 1)},  # key 9 removed in 3.0
}


@pytest.mark.parametrize(
    "versions, expected",
    [
        (TABLE["1.0"], "1.0"),
        (TABLE["2.0"], "2.0"),
        (TABLE["3.0"], "3.0"),
        ({0: (0, 7), 1: (0, 8), 20: (0, 2)}, "at least 3.0"),
        ({0: (0, 7), 1: (0, 9), 20: (0, 1), 99: (0, 0)}, "at least 3.0"),
        ({0: (0, 6), 1: (0, 7), 9: (0, 1), 20: (0, 1)}, "between 2.0 and 3.0"),
        ({0: (0, 4), 1: (0, 6), 9: (0, 1)}, "older than 1.0"),
        ({}, "older than 1.0"),
        ({0: (0, 7), 1: (0, 5), 9: (0, 1)}, "unknown"),
        ({0: (0, 7), 1: (0, 6), 9: (0, 1)}, "not exact, between 1.0 and 2.0"),
        ({0: (0, 7), 1: (0, 7), 9: (0, 1), 20: (0, 0)}, "between 2.0 and 3.0"),  # a newer Produce
        ({0: (0, 6), 1: (0, 7), 20: (0, 0)}, "between 2.0 and 3.0"),  # 2.x after key 9 went
        ({0: (0, 7), 1: (0, 8), 9: (0, 1), 20: (0, 1)}, "between 2.0 and 3.0"),  # 9 not gone yet
        ({0: (3, 7), 1: (0, 8), 20: (0, 1)}, "at least 3.0"),  # KIP-896 raised a minimum
    ],
)
def test_guess_release_forms(
    k: SimpleNamespace, versions: dict[int, tuple[int, int]], expected: str
) -> None:
    assert str(k.C.guess_release(versions, TABLE)) == expected


def test_guess_release_names_every_release_of_the_package_table(k: SimpleNamespace) -> None:
    releases = genpkg.import_module(PACKAGE, "releases").BROKER_RELEASES
    assert releases, "the package has a release table"
    for name, versions in releases.items():
        guess = k.C.guess_release(versions, releases)
        assert (guess.kind, guess.low) == ("exact", name)
    assert k.C.guess_release({}, {}).kind == "unknown"


# --- hostile input: only events, never an exception, bounded memory ------------------------

MAX_FRAME = 512


def chunks_of(frames: st.SearchStrategy[bytes]) -> st.SearchStrategy[list[bytes]]:
    """Byte streams cut anywhere: raw noise, size-prefixed noise, or frames given."""
    noise = st.binary(max_size=64)
    framed = st.binary(max_size=64).map(prefixed)
    big = st.integers(-(1 << 31), (1 << 31) - 1).map(lambda n: struct.pack(">i", n))
    return st.lists(st.one_of(noise, framed, big, frames), max_size=12)


def feed(k: SimpleNamespace, conn: Any, stream: list[bytes], kinds: tuple[type, ...]) -> None:
    """Every chunk gives only events of ``kinds``, no exception and no internal error (a bug
    caught by the guard); what is buffered stays under one frame."""
    for i, chunk in enumerate(stream):
        for event in conn.receive_data(chunk, float(i)):
            assert isinstance(event, kinds)
            assert getattr(event, "cause", None) is not k.C.FailureCause.INTERNAL_ERROR, event
        assert conn.buffered <= MAX_FRAME + 3
    end = (k.C.RequestTimedOut, k.C.ConnectionClosed)
    for event in conn.receive_data(b"", 100.0) + conn.handle_timer(1000.0):
        assert isinstance(event, kinds + end)


def response_frames(cids: list[int]) -> st.SearchStrategy[bytes]:
    """Frames whose correlation id is one in flight, with a random body."""
    return st.builds(
        lambda cid, body: prefixed(struct.pack(">i", cid) + body),
        st.sampled_from(cids),
        st.binary(max_size=80),
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_ready_client_survives_any_bytes(k: SimpleNamespace, data: st.DataObject) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 12), 0: (0, 11)}, max_frame_size=MAX_FRAME)
    cids = [conn.send(k.md.MetadataRequest(topics=None), 0.0) for _ in range(2)]
    cids.append(conn.send(k.produce.ProduceRequest(acks=0), 0.0))
    stream = data.draw(chunks_of(response_frames(cids)))
    feed(k, conn, stream, (k.C.Response, k.C.Throttled, k.C.ConnectionFailed, k.C.ConnectionClosed))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_handshaking_client_survives_any_bytes(k: SimpleNamespace, data: st.DataObject) -> None:
    raw = data.draw(st.booleans())
    versions = everything(k) | {17: (0, 0 if raw else 1)}
    name = data.draw(st.sampled_from(MECHANISMS))
    conn = k.C.ClientConnection(
        max_frame_size=MAX_FRAME, sasl=mechanism(k, name), broker_versions=versions
    )
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    if raw:  # into the raw-token mode first
        conn.receive_data(reply(k, header, k.hs.SaslHandshakeResponse(0, [name])), 0.0)
    frames = response_frames([header.correlation_id, header.correlation_id + 1])
    feed(
        k,
        conn,
        data.draw(chunks_of(frames)),
        (k.C.Ready, k.C.Throttled, k.C.ConnectionFailed, k.C.ConnectionClosed),
    )


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_negotiating_client_survives_any_bytes(k: SimpleNamespace, data: st.DataObject) -> None:
    conn = k.C.ClientConnection(max_frame_size=MAX_FRAME)
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    frames = response_frames([header.correlation_id])
    feed(
        k,
        conn,
        data.draw(chunks_of(frames)),
        (k.C.Ready, k.C.Throttled, k.C.ConnectionFailed, k.C.ConnectionClosed),
    )


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(stream=chunks_of(st.binary(min_size=8, max_size=80).map(prefixed)))
def test_server_survives_any_bytes(k: SimpleNamespace, stream: list[bytes]) -> None:
    server = k.C.ServerConnection(max_frame_size=MAX_FRAME)
    for chunk in stream:
        for event in server.receive_data(chunk):
            kinds = (k.C.RequestReceived, k.C.ConnectionFailed, k.C.ConnectionClosed)
            assert isinstance(event, kinds)  # b"" is the client closing
            assert getattr(event, "cause", None) is not k.C.FailureCause.INTERNAL_ERROR
        assert server.buffered <= MAX_FRAME + 3


# --- every package: few APIs, typing ----------------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SimpleNamespace]:
    """The package of this repo's own specs (ApiVersions, Metadata, UpdateFeatures only)."""
    out = tmp_path_factory.mktemp("small")
    pkg = genpkg.generate_package([genpkg.SPECS], out, "conn_small")
    return out, namespace(pkg)


def test_a_package_without_sasl_or_produce_still_connects(
    small: tuple[Path, SimpleNamespace],
) -> None:
    _, s = small
    assert 17 not in s.registry.API_KEYS and 0 not in s.registry.API_KEYS
    conn = connect(s, {18: (0, 4), 3: (0, 12)})
    conn.send(s.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(s, conn)
    assert names(conn.receive_data(metadata_reply(s, header), 0.0)) == ["Response"]
    plain = s.sasl.Plain("u", "p")
    lacking = s.C.ClientConnection(sasl=plain, broker_versions={17: (0, 1), 18: (0, 4)})
    [failed] = lacking.start(0.0)
    assert failed.cause is s.C.FailureCause.AUTHENTICATION_FAILED
    assert "without SaslHandshake" in failed.reason


TYPING_SNIPPET = """
from __future__ import annotations
from typing import assert_type
from conn_small.api_versions import ApiVersionsRequest, ApiVersionsResponse
from conn_small.metadata import MetadataRequest, MetadataResponse
from conn_small.connection import ClientConnection, Event, Response
from conn_small.client import Client
from conn_small.aio import AsyncClient

# Each generated request class names its response class.
assert_type(MetadataRequest.Response, type[MetadataResponse])
assert_type(MetadataRequest.API_KEY, int)


def blocking(client: Client, events: list[Event], conn: ClientConnection) -> None:
    assert_type(client.request(MetadataRequest()), MetadataResponse)
    assert_type(client.request(ApiVersionsRequest()), ApiVersionsResponse)
    assert_type(conn.send(MetadataRequest(), 0.0), int)
    for event in events:
        if isinstance(event, Response):
            assert_type(event.response_for(MetadataRequest), MetadataResponse | None)


async def non_blocking(client: AsyncClient) -> None:
    assert_type(await client.request(MetadataRequest()), MetadataResponse)
"""


def test_typed_responses_under_mypy_strict(small: tuple[Path, SimpleNamespace]) -> None:
    out, _ = small
    (out / "typing_snippet.py").write_text(TYPING_SNIPPET)
    # mypy follows the imports: the package's modules are checked strictly too.
    assert genpkg.mypy_strict("typing_snippet.py", out) is None


def test_importing_the_connection_imports_no_api_module(
    small: tuple[Path, SimpleNamespace],
) -> None:
    # Importing connection (and the adapters) pulls in no API module: a package without
    # SaslHandshake or Produce must import it, and importing it must stay cheap.
    code = (
        "import sys, conn_small.connection, conn_small.client, conn_small.aio\n"
        "print(sorted(m for m in sys.modules if m.startswith('conn_small.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=small[0],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    loaded = out.stdout
    assert "conn_small.metadata" not in loaded and "conn_small.api_versions" not in loaded
