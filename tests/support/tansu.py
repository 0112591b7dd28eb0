"""The live tests' Tansu broker: the session-scoped ``tansu`` fixture gives every test file
one shared broker (``bench.tansu.start_tansu``) and stops it at the end. Use it from a test
module with ``from tests.support.tansu import tansu  # noqa: F401``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.tansu import TansuHandle, free_port, start_tansu


@pytest.fixture(scope="session")
def tansu() -> Iterator[TansuHandle]:
    """One Tansu broker for the whole test session (stopped at the end)."""
    handle = start_tansu(free_port())
    try:
        yield handle
    finally:
        handle.stop()
