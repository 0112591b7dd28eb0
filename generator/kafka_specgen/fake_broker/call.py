"""What a request handler gets (``Call``) and may return besides a response (``Wait``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .shapes import Shapes
from .state import BrokerAddress, ClusterState


@dataclass
class Call:
    """One request, as a handler sees it."""

    api_key: int
    version: int
    request: Any
    client_id: str | None
    client_host: str
    node: BrokerAddress
    """The broker the request came to."""
    state: ClusterState
    shapes: Shapes
    response: type
    """The response class of the API."""
    now: float

    def make(self, cls: type, **values: Any) -> Any:
        return self.shapes.make(cls, **values)

    def item(self, cls: type, attr: str) -> Any:
        return self.shapes.item(cls, attr)

    def reply(self, **values: Any) -> Any:
        """The API's response with ``values`` (those its class has)."""
        return self.shapes.make(self.response, **values)


@dataclass
class Wait:
    """A response that is not ready yet (a Fetch waiting for data, a JoinGroup waiting
    for the other members): ``poll(now, expired)`` is called on every tick until it
    returns the response; ``expired`` is true from ``deadline`` on, and then it must."""

    deadline: float
    poll: Callable[[float, bool], Any]


def field_of(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` that ``obj`` has: fields that spec releases renamed
    (``generation_id`` became ``generation_id_or_member_epoch``, ...)."""
    for name in names:
        if hasattr(obj, name):
            return getattr(obj, name)
    return default
