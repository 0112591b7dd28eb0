"""How an API module declares what it answers: one ``Handler`` per API key, with the
versions it implements (franz-go kfake style: each handler declares its range)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .call import Call
from .shapes import PLAIN, Names

Answer = Callable[[Call], Any]
"""A handler: the response object, None (no answer: an acks=0 Produce), ``DISCONNECT``
(close the connection) or a ``Wait``."""


@dataclass(frozen=True)
class Handler:
    api_key: int
    """An ``ApiKey``."""
    versions: tuple[int, int]
    """The versions the handler implements, (min, max): the broker advertises what the
    release, the spec set and the handler all have."""
    answer: Answer
    names: Names = PLAIN
    """The older field names of the API's classes (see ``shapes``)."""
    reads: type | None = None
    """The ``typing.Protocol`` the handler reads its request as (tests check that every
    release's request class has its fields, under their names or older ones)."""
