"""Every wait of ``ClientConnection`` is bounded: deadlines start at ``send``, a throttle never
holds a request past its deadline, ``start(timeout=)`` bounds the handshake, an explicit
``version=`` the broker lacks is refused before anything is queued, and the errors name
their cause. Driven by scripted bytes and a clock that is a plain number."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.runtime.test_connection import connect, metadata_reply, names, sent
from tests.runtime.test_connection import k  # noqa: F401 - the module's fixture

MAX_THROTTLE_MS = 2**31 - 1
BROKER = {18: (0, 4), 3: (0, 12)}


def test_a_deadline_starts_when_send_takes_the_request(k: SimpleNamespace) -> None:
    conn = connect(k, BROKER, max_in_flight=1)
    first = conn.send(k.md.MetadataRequest(topics=None), 0.0, timeout=5.0)
    second = conn.send(k.md.MetadataRequest(topics=None), 1.0, timeout=2.0)  # queued
    [(header, _)] = sent(k, conn)
    assert header.correlation_id == first and conn.queued == 1
    assert conn.next_deadline() == 3.0  # the queued one's, from its send
    events = conn.handle_timer(3.0)
    assert names(events) == ["RequestTimedOut"]
    [expired] = events
    assert (expired.correlation_id, expired.written, expired.elapsed) == (second, False, 2.0)
    assert expired.throttled_until is None  # held back by the in-flight limit
    assert conn.state.value == "ready" and conn.awaiting(first)  # the connection goes on
    assert names(conn.receive_data(metadata_reply(k, header), 4.0)) == ["Response"]


def test_a_throttle_never_holds_a_request_past_its_deadline(k: SimpleNamespace) -> None:
    conn = connect(k, BROKER)
    conn.send(k.md.MetadataRequest(topics=None), 0.0)
    [(header, _)] = sent(k, conn)
    events = conn.receive_data(metadata_reply(k, header, MAX_THROTTLE_MS), 0.5)
    assert names(events) == ["Response", "Throttled"]
    held = conn.send(k.md.MetadataRequest(topics=None), 1.0, timeout=3.0)
    assert conn.data_to_send() == b""
    assert conn.next_deadline() == 4.0  # not the throttle's end, 24.8 days away
    [expired] = conn.handle_timer(4.0)
    assert (expired.correlation_id, expired.written) == (held, False)
    assert expired.throttled_until == pytest.approx(0.5 + MAX_THROTTLE_MS / 1000)
    error = k.C.RequestTimedOutError.from_timeout(expired)
    assert "throttle" in str(error) and error.cause is k.C.FailureCause.TIMED_OUT
    assert conn.state.value == "ready" and conn.next_deadline() is None


def test_a_throttle_from_api_versions_holds_the_first_requests(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(release_table={})
    conn.start(0.0)
    [(header, _)] = sent(k, conn)
    body = k.av.ApiVersionsResponse(
        throttle_time_ms=MAX_THROTTLE_MS,
        api_keys=[k.av.ApiVersionsResponseApiVersion(key, *r) for key, r in BROKER.items()],
    )
    from tests.runtime.test_connection import reply

    assert names(conn.receive_data(reply(k, header, body), 0.0)) == ["Throttled", "Ready"]
    conn.send(k.md.MetadataRequest(topics=None), 0.0, timeout=1.0)
    assert conn.data_to_send() == b"" and conn.next_deadline() == 1.0
    [expired] = conn.handle_timer(1.0)
    assert expired.written is False


def test_the_handshake_has_one_deadline(k: SimpleNamespace) -> None:
    conn = k.C.ClientConnection(request_timeout=30.0)
    conn.start(0.0, timeout=2.0)
    conn.data_to_send()
    assert conn.next_deadline() == 2.0
    [failed] = conn.handle_timer(2.0)
    assert failed.cause is k.C.FailureCause.TIMED_OUT and "ApiVersions" in failed.reason
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        conn.send(k.md.MetadataRequest(), 2.0)
    assert raised.value.cause is k.C.FailureCause.TIMED_OUT


@pytest.mark.parametrize(("version", "kind"), [(10, "NoCommonVersionError"), (99, "Unsupported")])
def test_an_explicit_version_the_broker_lacks_is_refused_locally(
    k: SimpleNamespace, version: int, kind: str
) -> None:
    conn = connect(k, {18: (0, 4), 3: (0, 9)})
    before = conn.send(k.md.MetadataRequest(topics=None), 0.0)
    sent(k, conn)
    with pytest.raises(k.errors.UnsupportedVersionError) as raised:
        conn.send(k.md.MetadataRequest(topics=None), 0.0, version=version)
    assert kind in type(raised.value).__name__
    if version == 10:
        assert raised.value.broker_range == (0, 9) and raised.value.client_range == (10, 10)
    assert conn.data_to_send() == b"" and conn.queued == 0
    after = conn.send(k.md.MetadataRequest(topics=None), 0.0, version=9)
    assert after == before + 1  # no correlation id was used up


def test_an_idle_close_then_send_names_the_cause(k: SimpleNamespace) -> None:
    conn = connect(k, BROKER)
    assert names(conn.receive_data(b"", 1.0)) == ["ConnectionClosed"]
    with pytest.raises(k.C.ConnectionFailedError) as raised:
        conn.send(k.md.MetadataRequest(), 1.0)
    assert raised.value.cause is k.C.FailureCause.CLOSED and "idle" in str(raised.value)
    assert isinstance(raised.value, k.C.ClientError)


def test_a_stray_frame_after_the_handshake_names_its_cause(k: SimpleNamespace) -> None:
    conn = connect(k, BROKER)
    stray = b"\x00\x00\x00\x08\x00\x00\x00\x63\x00\x00\x00\x00"
    [failed] = conn.receive_data(stray, 1.0)
    assert failed.cause is k.C.FailureCause.UNKNOWN_CORRELATION_ID
    with pytest.raises(k.C.ConnectionFailedError, match="correlation id 99"):
        conn.send(k.md.MetadataRequest(), 1.0)


def test_fresh_gives_a_new_connection_with_the_same_options(k: SimpleNamespace) -> None:
    conn = connect(k, BROKER, max_in_flight=2, request_timeout=3.0, client_id="x")
    conn.close()
    again = conn.fresh()
    assert again.state.value == "idle"
    assert (again.max_in_flight, again.request_timeout, again.client_id) == (2, 3.0, "x")


def test_exceptions_are_one_family(k: SimpleNamespace) -> None:
    C = k.C
    assert issubclass(C.LocalProtocolError, C.ClientError)
    assert issubclass(C.ConnectionFailedError, C.ClientError)
    assert issubclass(C.RequestTimedOutError, C.ConnectionFailedError)
    assert not issubclass(C.LocalProtocolError, C.ConnectionFailedError)


def test_reconnect_backoff_doubles_up_to_its_cap(k: SimpleNamespace) -> None:
    import random

    backoff = k.C.ReconnectBackoff(0.05, 1.0, jitter=0.0)
    assert [backoff.next_delay() for _ in range(7)] == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    backoff.reset()
    assert backoff.next_delay() == 0.05
    jittered = k.C.ReconnectBackoff(rng=random.Random(1))
    delays = [jittered.next_delay() for _ in range(100)]
    assert all(0.04 <= d <= 1.2 for d in delays) and len(set(delays)) > 50


# --- any throttles, any clock: every request ends by its deadline ---------------------------


class Driver:
    """Plays an event loop: it calls ``handle_timer`` whenever the connection's next
    deadline has come, and records when each request ended."""

    def __init__(self, k: SimpleNamespace, conn: Any) -> None:
        self.k = k
        self.conn = conn
        self.now = 0.0
        self.deadlines: dict[int, float] = {}
        self.ended: dict[int, float] = {}
        self.written: list[Any] = []
        self.closed = False

    def take(self, events: list[Any]) -> None:
        C = self.k.C
        for event in events:
            if isinstance(event, (C.Response, C.RequestTimedOut)):
                assert event.correlation_id not in self.ended
                self.ended[event.correlation_id] = self.now
            elif isinstance(event, C.ConnectionFailed):
                for cid in event.unanswered:
                    self.ended.setdefault(cid, self.now)
                self.closed = True
        self.written += [header for header, _ in sent(self.k, self.conn)]

    def advance(self, seconds: float) -> None:
        target = self.now + seconds
        for _ in range(1000):
            due = self.conn.next_deadline()
            if self.closed or due is None or due > target:
                break
            self.now = max(self.now, due)
            self.take(self.conn.handle_timer(self.now))
        else:
            raise AssertionError("the timer never settles")
        self.now = target
        self.check()

    def check(self) -> None:
        for cid, deadline in self.deadlines.items():
            ended = self.ended.get(cid)
            if ended is None:
                assert self.now < deadline, f"request {cid} outlived its deadline {deadline}"
            else:
                assert ended <= deadline, f"request {cid} ended at {ended} > {deadline}"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_every_request_ends_by_its_deadline(k: SimpleNamespace, data: st.DataObject) -> None:
    conn = connect(k, BROKER, max_in_flight=data.draw(st.integers(1, 3)))
    driver = Driver(k, conn)
    throttles = st.one_of(st.just(0), st.integers(0, 5000), st.just(MAX_THROTTLE_MS))
    for _ in range(data.draw(st.integers(1, 25))):
        if driver.closed:
            break
        action = data.draw(st.sampled_from(["send", "answer", "wait"]))
        if action == "send":
            timeout = data.draw(st.floats(0.01, 60.0))
            cid = conn.send(k.md.MetadataRequest(topics=None), driver.now, timeout=timeout)
            driver.deadlines[cid] = driver.now + timeout
            driver.take([])
        elif action == "answer" and driver.written:
            header = driver.written.pop(data.draw(st.integers(0, len(driver.written) - 1)))
            if header.correlation_id in driver.ended:
                continue
            reply = metadata_reply(k, header, data.draw(throttles))
            driver.take(conn.receive_data(reply, driver.now))
        driver.advance(data.draw(st.floats(0.0, 30.0)))
    # Finally run the clock past every deadline: each request has ended, in time.
    driver.advance(max(driver.deadlines.values(), default=0.0) - driver.now + 1.0)
    assert set(driver.ended) >= set(driver.deadlines)
