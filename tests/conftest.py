"""Session set-up shared by every test file.

The committed ``generated/kafka_messages`` must be what ``make generate`` writes from
``specs/`` today: many tests import it (and through it, the runtime), so the session stops
at once, with one line, when it is stale.

``KAFKA_MESSAGES_COMPILED=1`` runs the tests against the mypyc build of the generated
package (``make compiled`` -> ``build/compiled/kafka_messages``) instead of the pure-Python
``generated/kafka_messages``: the build goes first on ``sys.path`` and the whole package is
imported before any test file runs, so the files that put ``generated/`` on the path later
still use the compiled modules.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import sys
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Stop at once when generated/ is stale (before any test file imports it)."""
    from tests.support.genpkg import stale_generated

    stale = stale_generated()
    if stale is not None:
        pytest.exit(stale, returncode=1)


if os.environ.get("KAFKA_MESSAGES_COMPILED") == "1":
    _build = Path(__file__).resolve().parents[1] / "build" / "compiled"
    if not (_build / "kafka_messages" / "__init__.py").is_file():
        raise RuntimeError(
            f"KAFKA_MESSAGES_COMPILED=1 but {_build} is missing: run `make compiled`"
        )
    sys.path.insert(0, str(_build))
    import kafka_messages

    for _mod in pkgutil.iter_modules(kafka_messages.__path__):
        importlib.import_module(f"kafka_messages.{_mod.name}")
    if not str(kafka_messages.__file__).endswith(".so"):
        raise RuntimeError(f"KAFKA_MESSAGES_COMPILED=1 imported {kafka_messages.__file__}")
