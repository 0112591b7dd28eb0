"""KafkaJS for tests: the one ``make test`` installs with ``npm ci`` into ``.venv/kafkajs``
(exactly the version ``tests/support/kafkajs/package-lock.json`` pins), or the
``node_modules`` folder ``KAFKA_SPECGEN_KAFKAJS`` names. The scripts in
``tests/support/kafkajs/`` run on it against a fake cluster."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODULES = Path(os.environ.get("KAFKA_SPECGEN_KAFKAJS", ROOT / ".venv/kafkajs/node_modules"))
SCRIPTS = Path(__file__).parent / "kafkajs"


def modules() -> Path:
    """The ``node_modules`` folder holding kafkajs. ``make test`` installs it: a missing
    client is a failure to see, not a reason to skip."""
    if shutil.which("node") is None or not (MODULES / "kafkajs").is_dir():
        raise RuntimeError(
            "KafkaJS is missing: `make test` installs it (npm ci into .venv/kafkajs)"
        )
    return MODULES


def node(
    script: str, *args: str, env: dict[str, str] | None = None, timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    """Run ``tests/support/kafkajs/<script>`` with ``args`` (and ``env`` added to the
    environment) on the installed KafkaJS."""
    env = {
        **os.environ,
        **(env or {}),
        "NODE_PATH": str(modules()),
        "KAFKAJS_NO_PARTITIONER_WARNING": "1",
    }
    return subprocess.run(
        ["node", str(SCRIPTS / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def run(script: str, bootstrap: str, timeout: float = 90.0) -> Any:
    """Run a script that reads ``BOOTSTRAP`` and prints JSON lines; the last one, parsed."""
    done = node(script, env={"BOOTSTRAP": bootstrap}, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, (done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(lines[-1])
