"""The producer and consumer of ``tests/examples``, written without and with the ``cluster``
helpers, run against fake 3-broker clusters of Kafka 2.8, 3.9 and 4.3 (partition leaders
spread over the brokers, Produce v13 and Fetch v13+ by topic id on 4.3), and their plumbing
counted.

Each program runs in its own process, importing ``kafka_app``: a package generated from
Kafka 4.3.1's specs, as an author would vendor it.
"""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from kafka_specgen.fake_broker import FakeCluster
from kafka_specgen.format import write_package
from kafka_specgen.library import SpecSet, generate_files

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PLAIN = EXAMPLES / "plain_producer_consumer.py"
HELPED = EXAMPLES / "cluster_producer_consumer.py"
RECORDS = 1000


#: The releases the programs run against: fake 3-broker clusters, each with the release's own
#: spec data and advertised ranges.
RELEASES = ("2.8", "3.9", "4.3")


@pytest.fixture(scope="module")
def app_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("app")
    write_package(
        generate_files(SpecSet.of_release("4.3"), warn=False, package="kafka_app"),
        out / "kafka_app",
    )
    return out


@pytest.mark.parametrize("program", [PLAIN, HELPED], ids=["plain", "cluster"])
@pytest.mark.parametrize("release", RELEASES)
def test_the_programs_move_every_record_on_every_release(
    app_package: Path, program: Path, release: str
) -> None:
    with FakeCluster(release=release, brokers=3) as cluster:
        env = dict(os.environ, PYTHONPATH=str(app_package))
        result = subprocess.run(
            [sys.executable, str(program), cluster.bootstrap, str(RECORDS)],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.strip() == f"produced {RECORDS}, consumed {RECORDS}"
        assert cluster.failures == []
        leaders = cluster.state.topics["orders"].partitions
        assert len({log.leader for log in leaders}) == 3  # every broker led a partition


def code_lines(path: Path) -> tuple[int, int]:
    """(lines of code, lines of plumbing): lines holding code, the module docstring, comments
    and blank lines left out; plumbing is what lies between ``# plumbing:`` and
    ``# end plumbing``, or carries a ``# plumbing`` comment."""
    source = path.read_text()
    docstring = ast.parse(source).body[0]
    assert isinstance(docstring, ast.Expr)
    skip = set(range(docstring.lineno, (docstring.end_lineno or docstring.lineno) + 1))
    code: set[int] = set()
    marked: set[int] = set()
    starts: list[int] = []
    ends: list[int] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        line = token.start[0]
        if token.type == tokenize.COMMENT:
            text = token.string.lstrip("# ").rstrip()
            if text.startswith("plumbing:"):
                starts.append(line)
            elif text == "end plumbing":
                ends.append(line)
            elif text == "plumbing":
                marked.add(line)
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                                tokenize.DEDENT, tokenize.ENDMARKER):  # fmt: skip
            code.update(range(token.start[0], token.end[0] + 1))
    assert len(starts) == len(ends)
    for start, end in zip(starts, ends):
        assert start < end
        marked.update(range(start, end))
    code -= skip
    return len(code), len(code & marked)


def test_the_helpers_take_the_plumbing_below_15_percent() -> None:
    plain_lines, plain_plumbing = code_lines(PLAIN)
    helped_lines, helped_plumbing = code_lines(HELPED)
    # The numbers the report gives (docs/connection.md quotes them too).
    print(f"plain: {plain_plumbing}/{plain_lines}; helped: {helped_plumbing}/{helped_lines}")
    assert plain_plumbing / plain_lines > 0.3
    assert helped_plumbing / helped_lines < 0.15
    assert helped_lines < plain_lines
