"""A pytest plugin, installed with kafka-specgen: a fake Kafka cluster for each test, once per
Kafka release asked for. No Kafka checkout, no JVM, no Docker.

::

    def test_orders_round_trip(kafka_cluster):
        run_my_client(bootstrap=kafka_cluster.bootstrap)

    $ pytest --kafka-release 2.8,3.9,4.3   # each such test runs three times

- ``kafka_cluster``: a started ``kafka_specgen.fake_broker.FakeCluster`` emulating the
  release of the run, closed after the test (``bootstrap``, ``control``, ``inject``,
  ``throttle_ms``, ``state``, ``failures``, ...).
- ``kafka_release``: that release, as given (``"2.8"``); test ids name it
  (``test_orders_round_trip[kafka-2.8]``).
- ``--kafka-release`` (ini ``kafka_release``): the releases, comma-separated; default the
  newest release of the tool's table. ``--kafka-kraft`` (ini ``kafka_kraft``): KRaft
  brokers for releases that have both kinds (2.8 to 3.9; the default is ZooKeeper).
- ``@pytest.mark.kafka_cluster(brokers=3, topics={"orders": 6}, kraft=True, ...)``: the
  cluster of one test; any keyword ``FakeCluster`` takes (``telemetry``, ``unstable``,
  limits such as ``message_max_bytes``).

The plugin imports the fake broker only when a test asks for a cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

RELEASE_OPTION = "--kafka-release"
KRAFT_OPTION = "--kafka-kraft"
MARKER = FIXTURE = "kafka_cluster"
_RELEASES = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-specgen", "fake Kafka clusters (kafka-specgen)")
    group.addoption(
        RELEASE_OPTION,
        metavar="X.Y,...",
        help="run each test that uses the kafka_cluster fixture once per Kafka release "
        "(comma-separated, 0.8.0 to 4.3; default: the newest)",
    )
    group.addoption(
        KRAFT_OPTION,
        action="store_true",
        default=None,
        help="emulate KRaft brokers where a release has both kinds (2.8 to 3.9)",
    )
    parser.addini("kafka_release", "Kafka releases for kafka_cluster (comma-separated)", default="")
    parser.addini("kafka_kraft", "KRaft brokers where a release has both kinds", type="bool")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): options of the fake Kafka cluster of the test "
        "(brokers=, topics=, kraft=, telemetry=, unstable=, limits)",
    )
    text = config.getoption(RELEASE_OPTION) or config.getini("kafka_release")
    if not text:
        return
    names = [name.strip() for name in str(text).split(",") if name.strip()]
    if not names:
        raise pytest.UsageError(f"{RELEASE_OPTION}: no release in {text!r}")
    from .broker_releases import ReleaseTableError, release

    for name in names:
        try:
            release(name)
        except ReleaseTableError as exc:
            raise pytest.UsageError(f"{RELEASE_OPTION}: {exc}") from None
    config.stash[_RELEASES] = names


def chosen_releases(config: pytest.Config) -> list[str]:
    """The releases of this run: as given, else the newest of the table."""
    names = config.stash.get(_RELEASES, None)
    if names:
        return names
    from .broker_releases import releases

    return [releases()[-1].release.short]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if FIXTURE not in metafunc.fixturenames:
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        given = marker.args[0] if marker.args else marker.kwargs.get("argnames", "")
        names = given if isinstance(given, (list, tuple)) else str(given).split(",")
        if "kafka_release" in [name.strip() for name in names]:
            return  # the test chose its releases itself
    names = chosen_releases(metafunc.config)
    metafunc.parametrize("kafka_release", names, ids=[f"kafka-{n}" for n in names], indirect=True)


@pytest.fixture
def kafka_release(request: pytest.FixtureRequest) -> str:
    """The Kafka release this run of the test emulates (``"2.8"``)."""
    param = getattr(request, "param", None)
    return str(param) if param is not None else chosen_releases(request.config)[0]


@pytest.fixture
def kafka_cluster(request: pytest.FixtureRequest, kafka_release: str) -> Iterator[Any]:
    """A fake Kafka cluster emulating ``kafka_release``, started; closed after the test.
    Options: the ``kafka_cluster`` marker's keywords."""
    from .fake_broker import FakeBrokerError, FakeCluster

    options: dict[str, Any] = {}
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if marker.args:
            pytest.fail(f"@pytest.mark.{MARKER} takes keywords only", pytrace=False)
        options.update(marker.kwargs)
    if "kraft" not in options:  # the run's choice, for the releases that have KRaft brokers
        flag = request.config.getoption(KRAFT_OPTION)
        wanted = flag if flag is not None else request.config.getini("kafka_kraft")
        options["kraft"] = bool(wanted) and _has_kraft(kafka_release)
    try:
        cluster = FakeCluster(release=kafka_release, **options)
    except (FakeBrokerError, TypeError) as exc:
        pytest.fail(f"kafka_cluster for Kafka {kafka_release}: {exc}", pytrace=False)
    with cluster:
        yield cluster
    if cluster.failures:
        request.node.add_report_section(
            "teardown", "fake Kafka cluster", "\n".join(cluster.failures)
        )


def _has_kraft(name: str) -> bool:
    from .broker_releases import ReleaseTableError, release

    try:
        release(name, kraft=True)
    except ReleaseTableError:
        return False
    return True
