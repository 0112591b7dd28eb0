"""Hostile brokers (``tests/support/hostile.py``) against the blocking client, the asyncio
client and ``broker-versions``: every case ends within its timeout, with the documented
exception (the table in docs/connection.md, "Hostile brokers")."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import pytest

from kafka_messages.aio import AsyncClient
from kafka_messages.client import Client
from kafka_messages.connection import (
    ClientConnection,
    ConnectionFailedError,
    FailureCause,
    RequestTimedOutError,
)
from kafka_messages.metadata import MetadataRequest
from kafka_messages.negotiation import NoCommonVersionError
from kafka_specgen.cli import main
from tests.support.hostile import BEHAVIOURS, hostile_broker

TIMEOUT = 1.0
#: Slack for a loaded machine: the bound checked is "ends by its timeout", not a speed.
SLACK = 2.0

#: case -> (the step that fails, the exception, its cause, broker-versions' message)
EXPECTED: dict[str, tuple[str, type[Exception], FailureCause | None, str]] = {
    "huge throttle": ("request", RequestTimedOutError, FailureCause.TIMED_OUT,
                      r"no reply within 1 s \(.*throttle.*\)"),
    "never answers": ("connect", ConnectionFailedError, FailureCause.TIMED_OUT,
                      r"no reply within 1 s \(.*ApiVersions.*\)"),
    "silent after the handshake": ("request", RequestTimedOutError, FailureCause.TIMED_OUT,
                                   r"no reply within 1 s \(.*Metadata.*\)"),
    "closes mid-frame": ("request", ConnectionFailedError, FailureCause.CLOSED,
                         r"the connection was closed before a full reply arrived .*unread.*"),
    "wrong correlation id": ("connect", ConnectionFailedError,
                             FailureCause.UNKNOWN_CORRELATION_ID, r"unknown correlation id: .*"),
    "absurd ApiVersions ranges": ("request", NoCommonVersionError, None,
                                  r"Metadata\(3\): no common version: .*40 to 50.*"),
    "refuses every ApiVersions": ("connect", ConnectionFailedError, FailureCause.HANDSHAKE_FAILED,
                                  r"handshake failed: the broker refused ApiVersions v0 .*"),
    "trickles its answer": ("connect", ConnectionFailedError, FailureCause.TIMED_OUT,
                            r"no reply within 1 s \(.*ApiVersions.*\)"),
    "announces a 2 GiB frame": ("connect", ConnectionFailedError, FailureCause.FRAME_TOO_LARGE,
                                r"garbage reply \(.*2147483647 bytes.*\); is this a Kafka broker\?"),
}  # fmt: skip
CASES = sorted(EXPECTED)


def test_every_behaviour_has_an_expectation() -> None:
    assert set(BEHAVIOURS) == set(EXPECTED)


def connection() -> ClientConnection:
    return ClientConnection(request_timeout=TIMEOUT, release_table={})


def check(case: str, error: BaseException, stage: str, adapter: str, elapsed: float) -> None:
    want_stage, kind, cause, _ = EXPECTED[case]
    assert stage == want_stage, f"{case}: failed at {stage}, not {want_stage}: {error!r}"
    assert type(error) is kind, f"{case}: {error!r}"
    if cause is not None:
        assert isinstance(error, ConnectionFailedError) and error.cause is cause, error
    assert elapsed < TIMEOUT + SLACK, f"{case}: {elapsed:.2f} s"
    # for the report: case | adapter | exception | time to end
    print(f"\n| {case} | {adapter} | {type(error).__name__} ({cause and cause.name}) "
          f"| {elapsed:.2f} s |", end="")  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_blocking_client(case: str) -> None:
    with hostile_broker(case) as broker:
        started = time.monotonic()
        stage = "connect"
        try:
            with Client.connect("127.0.0.1", broker.port, connection(), timeout=TIMEOUT) as c:
                stage = "request"
                c.request(MetadataRequest(topics=None), timeout=TIMEOUT)
        except Exception as exc:  # noqa: BLE001 - the case says which
            check(case, exc, stage, "Client", time.monotonic() - started)
        else:
            pytest.fail(f"{case}: no exception")


@pytest.mark.parametrize("case", CASES)
def test_asyncio_client(case: str) -> None:
    async def run() -> tuple[str, BaseException | None]:
        stage = "connect"
        try:
            client = await AsyncClient.connect(
                "127.0.0.1", broker.port, connection(), timeout=TIMEOUT
            )
            try:
                stage = "request"
                await client.request(MetadataRequest(topics=None), timeout=TIMEOUT)
            finally:
                await client.close()
        except Exception as exc:  # noqa: BLE001 - the case says which
            return stage, exc
        return stage, None

    with hostile_broker(case) as broker:
        started = time.monotonic()
        # wait_for only guards the test itself: the client must end on its own, well before
        stage, error = asyncio.run(asyncio.wait_for(run(), 30))
        assert error is not None, f"{case}: no exception"
        check(case, error, stage, "AsyncClient", time.monotonic() - started)


@pytest.mark.parametrize("case", CASES)
def test_broker_versions(case: str, capsys: pytest.CaptureFixture[str]) -> None:
    with hostile_broker(case) as broker:
        started = time.monotonic()
        code = main(["broker-versions", "--bootstrap-server", broker.bootstrap,
                     "--timeout", str(TIMEOUT)])  # fmt: skip
        elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    pattern = EXPECTED[case][3]
    prefix = rf"kafka-specgen broker-versions: 127\.0\.0\.1:{broker.port}: "
    assert re.fullmatch(prefix + pattern + r"\n", err), err
    assert elapsed < TIMEOUT + SLACK, f"{case}: {elapsed:.2f} s"
    with capsys.disabled():
        print(f"\n| {case} | broker-versions | exit 1: {err.split(': ', 2)[-1].strip()[:70]} "
              f"| {elapsed:.2f} s |", end="")  # fmt: skip


def test_huge_throttle_holds_a_request_back_but_keeps_the_connection() -> None:
    """The request held back by the 24.8-day throttle ends alone, unwritten; the connection
    is still open and says until when it is throttled."""
    with hostile_broker("huge throttle") as broker:
        with Client.connect("127.0.0.1", broker.port, connection()) as client:
            with pytest.raises(RequestTimedOutError) as raised:
                client.request(MetadataRequest(topics=None), timeout=0.3)
            timed_out: Any = raised.value.timed_out
            assert timed_out.written is False
            assert timed_out.throttled_until is not None
            assert timed_out.throttled_until - time.monotonic() > 24 * 86400
            assert client.connection.state.value == "ready"
            assert "throttle" in str(raised.value)
