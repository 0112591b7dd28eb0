"""The pytest plugin installed with the tool (``kafka_specgen.pytest_plugin``, a ``pytest11``
entry point), run with pytester as a user's test suite runs it."""

from __future__ import annotations

import pytest

# Imported here so that pytester's in-process runs, which drop the modules they import
# after each run, share these (and the release table cached in them) with this process.
import kafka  # noqa: F401
import kafka_specgen.broker_releases  # noqa: F401
from kafka_specgen.fake_broker import FakeCluster
from kafka_specgen.format import cache_dir

pytest_plugins = ["pytester"]


#: The package cache of this process (pytester gives each run a new home folder).
CACHE = cache_dir()


@pytest.fixture(autouse=True)
def shared_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(CACHE))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """A user's pytest run, in this process (hypothesis' plugin, which this venv has and
    which spends a second summing up every run, left out)."""
    return pytester.runpytest_inprocess("-p", "no:hypothesispytest", *args)


@pytest.fixture(autouse=True, scope="module")
def imported_packages() -> None:
    """The generated packages of the releases below, imported once for every run."""
    for release in ("0.10.2", "2.4", "2.8", "3.9", "4.0.0", "4.3"):
        FakeCluster(release=release).close()


USER_TESTS = """
import pytest
from kafka import KafkaProducer


def test_produce(kafka_cluster, kafka_release):
    assert kafka_cluster.release.startswith(kafka_release)
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, max_block_ms=5000)
    producer.send("t", b"v").get(timeout=5)
    producer.close(timeout=1)
    assert kafka_cluster.state.topics["t"].partitions[0].end == 1
    assert kafka_cluster.failures == []


@pytest.mark.kafka_cluster(brokers=2, topics={"orders": 3}, message_max_bytes=2048)
def test_marker_options(kafka_cluster):
    assert len(kafka_cluster.state.brokers) == 2
    assert len(kafka_cluster.state.topics["orders"].partitions) == 3
    assert kafka_cluster.limits.message_max_bytes == 2048
    assert kafka_cluster.kind == "zookeeper" or kafka_cluster.release.startswith("4.")


def test_hooks(kafka_cluster):
    from kafka_specgen.fake_broker import DISCONNECT

    kafka_cluster.inject(0, 6)  # the next Produce answer: NOT_LEADER_OR_FOLLOWER
    kafka_cluster.control(3, lambda call: DISCONNECT)
    kafka_cluster.control(3, None)
    kafka_cluster.throttle_ms = 5
    assert kafka_cluster.bootstrap.startswith("127.0.0.1:")


def test_without_a_cluster():
    pass
"""


def test_each_release_runs_each_test_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    result = run(pytester, "--kafka-release", "2.8, 3.9,4.3", "-v")
    result.assert_outcomes(passed=10)
    for release in ("2.8", "3.9", "4.3"):
        result.stdout.fnmatch_lines([f"*test_produce?kafka-{release}? PASSED*"])
        result.stdout.fnmatch_lines([f"*test_marker_options?kafka-{release}? PASSED*"])
    result.stdout.fnmatch_lines(["*test_without_a_cluster PASSED*"])


def test_the_newest_release_by_default(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="""
def test_newest(kafka_cluster, kafka_release):
    assert (kafka_release, kafka_cluster.release) == ("4.3", "4.3.0")
""")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_newest?kafka-4.3? PASSED*"])


def test_ini_options_and_kraft(pytester: pytest.Pytester) -> None:
    """Releases and KRaft from the ini file; a release without KRaft brokers keeps its
    ZooKeeper ones; a marker's kraft= wins."""
    pytester.makeini("[pytest]\nkafka_release = 2.4,3.9\nkafka_kraft = true\n")
    pytester.makepyfile(test_user="""
import pytest

def test_kind(kafka_cluster, kafka_release):
    assert kafka_cluster.kind == ("zookeeper" if kafka_release == "2.4" else "kraft")

@pytest.mark.kafka_cluster(kraft=False)
def test_marker_wins(kafka_cluster):
    assert kafka_cluster.kind == "zookeeper"
""")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*test_kind?kafka-2.4? PASSED*", "*test_kind?kafka-3.9? PASSED*"])


def test_a_test_may_choose_its_releases(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="""
import pytest

@pytest.mark.parametrize("kafka_release", ["0.10.2", "4.0.0"])
def test_chosen(kafka_cluster, kafka_release):
    assert kafka_cluster.release == {"0.10.2": "0.10.2.0", "4.0.0": "4.0.0"}[kafka_release]
""")
    result = run(pytester, "--kafka-release", "3.9")
    result.assert_outcomes(passed=2)


def test_bad_releases_and_options_are_clear(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user="""
import pytest

def test_any(kafka_cluster):
    pass

@pytest.mark.kafka_cluster(brokers=0)
def test_no_brokers(kafka_cluster):
    pass
""")
    result = run(pytester, "--kafka-release", "3.9,9.9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kafka-release: no Kafka 9.9* in the release table*"])
    result = run(pytester, "--kafka-release", "3.9")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*kafka_cluster for Kafka 3.9: a cluster needs at least one broker*"]
    )
