"""KafkaJS (npm) for tests: installed once into the tool's cache folder by ``npm``, and run
as small node scripts against a fake cluster. Skips only where ``node``/``npm`` are not
installed (they are on the project's machines; ``make test`` does not install Node)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from kafka_specgen.format import cache_dir

VERSION = "2.2.4"
SCRIPTS = Path(__file__).parent


def modules() -> Path:
    """The node_modules folder holding kafkajs, installed on first use."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed")
    home = cache_dir() / "node" / f"kafkajs-{VERSION}"
    if not (home / "node_modules" / "kafkajs").is_dir():
        home.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="staging-", dir=home.parent))
        done = subprocess.run(
            [
                "npm",
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(staging),
                f"kafkajs@{VERSION}",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            raise RuntimeError(f"npm could not install kafkajs: {done.stderr[-500:]}")
        try:
            staging.rename(home)
        except OSError:  # another run got there first
            shutil.rmtree(staging, ignore_errors=True)
    return home / "node_modules"


def run(script: str, bootstrap: str, timeout: float = 90.0) -> Any:
    """Run ``tests/support/<script>`` with BOOTSTRAP set; the JSON it prints last."""
    env = {**os.environ, "BOOTSTRAP": bootstrap, "NODE_PATH": str(modules())}
    done = subprocess.run(
        ["node", str(SCRIPTS / script)], env=env, capture_output=True, text=True, timeout=timeout
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, (done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(lines[-1])
