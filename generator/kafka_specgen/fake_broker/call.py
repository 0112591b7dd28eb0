"""What a request handler gets: ``Call``, one request with what answering it needs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .limits import Limits
from .shapes import PLAIN, Names, Shapes
from .state import BrokerAddress, ClusterState
from .waiting import Signal, Wait

__all__ = ["Call", "Signal", "Wait"]


@dataclass
class Call:
    """One request, as a handler (or a ``control`` function) sees it."""

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
    limits: Limits = field(default_factory=Limits)
    names: Names = PLAIN
    """The older field names of the API (its handler's)."""
    principal: str = "User:ANONYMOUS"
    """Who sent it: ``User:NAME`` after SASL, ``User:ANONYMOUS`` without (as Kafka names
    them in ACLs)."""

    # --- for control functions: lenient, fields the release lacks are left out ----------

    def make(self, cls: type, **values: Any) -> Any:
        return self.shapes.make(cls, **values)

    def reply(self, **values: Any) -> Any:
        """The API's response with ``values`` (those its class has)."""
        return self.shapes.make(self.response, **values)

    def item(self, cls: type, attr: str) -> Any:
        """The class of the structs in field ``attr`` of ``cls`` (its newest name)."""
        return self.shapes.item(cls, attr, self.names)

    # --- for handlers: under the newest names, strict ------------------------------------

    def read(self, protocol: type) -> Any:
        """The request as ``protocol`` types it, whatever the release's names (annotate
        the variable: ``req: FetchIn = call.read(FetchIn)``)."""
        return self.shapes.view(self.request, protocol, self.names)

    def view(self, obj: Any, protocol: type) -> Any:
        """A part of the request (or any generated object) as ``protocol`` types it."""
        return self.shapes.view(obj, protocol, self.names)

    def build(self, cls: type, **values: Any) -> Any:
        """``cls`` with ``values`` under the newest names; a name neither the class nor
        the API's ``Names`` knows raises ``KeyError``."""
        return self.shapes.build(cls, self.names, values)

    def respond(self, **values: Any) -> Any:
        """The API's response, as ``build`` makes it."""
        return self.shapes.build(self.response, self.names, values)

    def has(self, cls: type, attr: str) -> bool:
        return self.shapes.has(cls, attr, self.names)

    # --- for handlers that check ACLs on what they find (a share session's partitions) ----

    def permits(self, operation: int, resource_type: int, name: str) -> bool:
        """Whether the principal may do ``operation`` on the resource (always, when the
        cluster enforces no ACLs)."""
        authorizer = self.state.authorizer
        return authorizer is None or authorizer.authorize(
            self.principal, self.client_host, operation, resource_type, name
        )
