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
from kafka_specgen.fake_broker.shapes import Shapes


def _jsonable(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


class Speaker:
    """One connection to broker ``node`` of ``cluster`` (authenticated with ``sasl``):
    ``speaker(ApiKey.X, version=None, **fields)`` sends a request and returns the answer.
    Fields the release's request class does not have are left out (so one test speaks to
    every release)."""

    def __init__(self, cluster: FakeCluster, node: int = 0, *, sasl: Any = None) -> None:
        self.cluster = cluster
        broker = cluster.state.brokers[node]
        self.registry = cluster.package.module("registry")
        client = cluster.package.module("client").Client
        if sasl is None:
            self.client = client.connect(broker.host, broker.port)
        else:  # a mechanism of the package's ``sasl`` module, e.g. ``Plain(user, password)``
            connection = cluster.package.module("connection").ClientConnection(sasl=sasl)
            self.client = client.connect(broker.host, broker.port, connection)
        self.shapes = Shapes(cluster.package)

    def make(self, api_key: int, **fields: Any) -> Any:
        cls = self.registry.API_KEYS[api_key].request
        return cls.from_dict(_jsonable(self._known(cls, fields)))

    def _known(self, cls: type, fields: dict[str, Any]) -> dict[str, Any]:
        kept = {}
        for name, value in fields.items():
            attr = self.shapes.attr(cls, name)  # "offset" is the attribute offset_
            if attr is None:
                continue
            if isinstance(value, dict):
                value = self._known(self.shapes.item(cls, name), value)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                item = self.shapes.item(cls, name)
                value = [self._known(item, v) for v in value]
            kept[attr] = value
        return kept

    def __call__(self, api_key: int, version: int | None = None, **fields: Any) -> Any:
        """The answer to the request; at ``version``, the fields that version lacks are
        reset first (one call speaks every version)."""
        request = self.make(api_key, **fields)
        if version is not None:
            request = self.shapes.fit(request, version)
        return self.client.request(request, version=version)

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
