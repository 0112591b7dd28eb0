"""Speaking to a fake cluster at protocol level with the generated package's own client:
requests written as plain values (dicts for structs, ``uuid.UUID`` for topic ids), answers
as the package's response objects."""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable
from typing import Any

from kafka_specgen.fake_broker import FakeCluster


def _jsonable(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class Speaker:
    """One connection to broker ``node`` of ``cluster``:
    ``speaker(ApiKey.X, version=None, **fields)`` sends a request and returns the answer."""

    def __init__(self, cluster: FakeCluster, node: int = 0) -> None:
        self.cluster = cluster
        broker = cluster.state.brokers[node]
        self.registry = cluster.package.module("registry")
        self.client = cluster.package.module("client").Client.connect(broker.host, broker.port)

    def make(self, api_key: int, **fields: Any) -> Any:
        return self.registry.API_KEYS[api_key].request.from_dict(_jsonable(fields))

    def __call__(self, api_key: int, version: int | None = None, **fields: Any) -> Any:
        return self.client.request(self.make(api_key, **fields), version=version)

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Speaker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_until(check: Callable[[], Any], timeout: float = 15.0, step: float = 0.05) -> Any:
    """Poll ``check()`` until it is truthy (bounded); its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(step)
