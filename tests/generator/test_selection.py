"""Client-only packages: ``generate --listeners`` and ``--apis`` keep part of a spec set."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from kafka_specgen.cli import main
from kafka_specgen.library import load_specs
from kafka_specgen.selection import Selection, SelectionError
from tests.support.genpkg import CORPORA

TRUNK = CORPORA / "trunk-2024-10"


def test_broker_listener_keeps_what_clients_talk_to() -> None:
    everything, _ = load_specs([TRUNK], warn=False)
    kept, _ = load_specs([TRUNK], warn=False, selection=Selection(listeners=("broker",)))
    requests = {m.api_key: m for m in everything if m.type == "request"}
    expected = {key for key, m in requests.items() if "broker" in m.listeners}
    assert {m.api_key for m in kept if m.type == "request"} == expected
    assert {m.api_key for m in kept if m.type == "response"} == expected
    assert 62 not in expected and 0 in expected  # BrokerRegistration is the controller's
    assert {m.type for m in kept} == {"request", "response", "header", "data"}
    data = {m.name for m in kept if m.type == "data"}
    assert {"ConsumerProtocolSubscription", "ConsumerProtocolAssignment"} <= data
    # records of the coordinators' and KRaft's own folders go
    assert all(m.scope == "message" for m in kept if m.type == "data")
    assert len(kept) < len(everything)


def test_apis_by_name_or_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["generate", "--specs", str(TRUNK), "--out", str(tmp_path), "--package", "picked"]
    assert main([*args, "--apis", "produce, Fetch,3,18"]) == 0
    sys.path.insert(0, str(tmp_path))
    try:
        registry = importlib.import_module("picked.registry")
        assert sorted(registry.API_KEYS) == [0, 1, 3, 18]
        assert registry.API_NAMES[62] == "BrokerRegistration"  # names stay known
        produce = importlib.import_module("picked.produce")
        request = produce.ProduceRequest(acks=1, timeout_ms=5)
        assert produce.ProduceRequest.decode(request.encode(9), 9) == request
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("picked")]:
            del sys.modules[name]
    assert not (tmp_path / "picked" / "vote.py").exists()
    assert len(list((tmp_path / "picked").glob("*.py"))) < 40


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--listeners", "brokers", "unknown listener brokers"),
        ("--apis", "Produce,NoSuchApi,999", "has no API NoSuchApi, 999"),
    ],
)
def test_unknown_names_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    args = ["generate", "--specs", str(TRUNK), "--out", str(tmp_path), option, value]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_an_empty_selection_keeps_everything() -> None:
    everything, _ = load_specs([TRUNK], warn=False)
    assert Selection().apply(everything) == everything
    with pytest.raises(SelectionError):
        Selection(apis=("x",)).apply(everything)


@pytest.mark.parametrize("selection", [["--apis", "Metadata"], ["--listeners", "broker"]])
def test_a_client_only_package_keeps_api_versions_and_connects(
    tmp_path: Path, selection: list[str]
) -> None:
    """--apis without ApiVersions still gives a package that can connect: ApiVersions and
    the headers are always kept, and the connection's handshake runs against a broker."""
    args = ["generate", "--specs", str(TRUNK), "--out", str(tmp_path), "--package", "only"]
    assert main([*args, *selection]) == 0
    sys.path.insert(0, str(tmp_path))
    try:
        registry = importlib.import_module("only.registry")
        assert 18 in registry.API_KEYS and 3 in registry.API_KEYS
        assert (tmp_path / "only" / "headers.py").is_file()
        connection = importlib.import_module("only.connection")
        metadata = importlib.import_module("only.metadata")
        client = connection.ClientConnection(release_table={})
        server = connection.ServerConnection()
        client.start(0.0)
        [request] = server.receive_data(client.data_to_send())
        assert request.api_key == 18
        newest = registry.API_KEYS[18].max_version
        server.send_api_versions(request, {3: (0, 12), 18: (0, newest)})
        [ready] = client.receive_data(server.data_to_send(), 0.0)
        assert isinstance(ready, connection.Ready)
        client.send(metadata.MetadataRequest(topics=None), 0.0)
        [request] = server.receive_data(client.data_to_send())
        assert (request.api_key, request.api_version) == (3, 12)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n.startswith("only")]:
            del sys.modules[name]
