"""``kafka-specgen broker-versions`` against a real Tansu broker and small fake brokers.

The fake brokers (threads on loopback) cover what Tansu does not do: the KIP-511 downgrade
(Tansu answers any ApiVersions version with error 0), unknown api keys, garbage replies
and silence.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafka_specgen import broker_releases
from kafka_specgen.cli import main
from kafka_specgen.library import SpecSet, generated_package
from tests.support import genpkg
from bench.tansu import TansuHandle, free_port
from tests.support.tansu import tansu  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[2]

from kafka_messages import framing, registry  # noqa: E402
from kafka_messages.connection import Features, guess_broker_release  # noqa: E402
from kafka_messages.api_versions import (  # noqa: E402
    ApiVersionsRequest,
    ApiVersionsResponse,
    ApiVersionsResponseApiVersion,
    ApiVersionsResponseFinalizedFeatureKey,
    ApiVersionsResponseSupportedFeatureKey,
)
from kafka_messages.headers import ResponseHeader  # noqa: E402
from kafka_messages.metadata import MetadataResponse, MetadataResponseBroker  # noqa: E402

LINE = re.compile(
    r"^\t(?P<label>[A-Za-z]+\((?P<key>\d+)\)|UNKNOWN\((?P<ukey>\d+)\)): "
    r"(?:(?P<lo>\d+)(?: to (?P<hi>\d+))?"
    r"(?: \[(?:usable: (?P<usable>\d+)|unusable: node too (?P<unusable>new|old))\])?"
    r"|UNSUPPORTED)(?P<comma>,?)$"
)
HEAD = re.compile(
    r"^(?P<host>[\d.]+):(?P<port>\d+) \(id: (?P<id>-?\d+) rack: (?P<rack>\S+)\) -> \($"
)
#: kafka-features.sh describe's line (Kafka's FeatureCommand.handleDescribe).
FEATURE = re.compile(
    r"^Feature: (?P<name>[a-z.]+)\tSupportedMinVersion: (?P<min>\S+)"
    r"\tSupportedMaxVersion: (?P<max>\S+)\tFinalizedVersionLevel: (?P<level>\S+( \d+)?)"
    r"\tEpoch: (?P<epoch>-|\d+)$"
)
#: A parsed API line: the broker's range and Kafka's marker ("usable: 4", "node too new",
#: or None when there is no marker), or None for UNSUPPORTED.
Row = tuple[int, int, "str | None"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generated packages go to a cache folder of the test session, not the user's."""
    monkeypatch.setenv("KAFKA_SPECGEN_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["broker-versions", *args])
    out, err = capsys.readouterr()
    return code, out, err


def parse_text(text: str, names: dict[int, str]) -> list[dict[str, object]]:
    """The text output as data; asserts Kafka's layout line by line."""
    brokers: list[dict[str, object]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        head = HEAD.match(lines[i])
        assert head, lines[i]
        apis: dict[int, Row | None] = {}
        i += 1
        while lines[i] != ")":
            m = LINE.match(lines[i])
            assert m, lines[i]
            # every entry but the last ends with a comma
            assert bool(m["comma"]) == (lines[i + 1] != ")"), lines[i]
            key = int(m["key"] or m["ukey"])
            assert (m["ukey"] is not None) == (key not in names)
            if m["lo"] is None:
                apis[key] = None
            else:
                lo = int(m["lo"])
                hi = int(m["hi"]) if m["hi"] else lo
                assert m["hi"] is None or hi != lo  # "min" alone when min == max
                marker = (
                    f"usable: {m['usable']}"
                    if m["usable"]
                    else f"node too {m['unusable']}" if m["unusable"] else None
                )
                apis[key] = (lo, hi, marker)
            i += 1
        # after Kafka's block, the release the broker looks like, then its features
        guess = re.fullmatch(r"release guess: (.+)", lines[i + 1])
        assert guess, lines[i + 1]
        i += 2
        features = []
        while i < len(lines) and lines[i].startswith("Feature: "):
            feature = FEATURE.match(lines[i])
            assert feature, lines[i]
            features.append(feature.groupdict())
            i += 1
        assert [f["name"] for f in features] == sorted(f["name"] for f in features)
        brokers.append(
            {
                "host": head["host"],
                "port": int(head["port"]),
                "id": int(head["id"]),
                "rack": head["rack"],
                "apis": apis,
                "release_guess": guess[1],
                "features": features,
            }
        )
    return brokers


def direct_api_versions_v0(host: str, port: int) -> dict[int, tuple[int, int]]:
    """ApiVersions v0 by hand (no generated code): header v1, empty body; v0 reply."""
    request = struct.pack(">hhih", 18, 0, 99, 6) + b"direct"
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(struct.pack(">i", len(request)) + request)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(65536)
            assert chunk, "connection closed"
            data += chunk
    correlation_id, error_code, count = struct.unpack_from(">ihi", data, 4)
    assert (correlation_id, error_code) == (99, 0)
    entries = [struct.unpack_from(">hhh", data, 14 + 6 * n) for n in range(count)]
    assert 14 + 6 * count == len(data)
    return {key: (lo, hi) for key, lo, hi in entries}


# --- against Tansu -------------------------------------------------------------------------


def expected_marker(entry: object, lo: int, hi: int) -> str | None:
    """Kafka's marker for a broker range, computed here from the registry entry."""
    if entry is None:
        return None
    low, high = entry.min_version, entry.max_version  # type: ignore[attr-defined]
    if lo > high:
        return "node too new"
    if hi < low:
        return "node too old"
    return f"usable: {min(hi, high)}"


def test_text_output_matches_a_direct_api_versions_exchange(
    tansu: TansuHandle, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    code, out, err = run_cli(capsys, "--bootstrap-server", tansu.bootstrap, "--timeout", "5")
    assert code == 0, err
    [broker] = parse_text(out, registry.API_NAMES)
    assert (broker["host"], broker["port"], broker["id"], broker["rack"]) == (
        "127.0.0.1",
        tansu.port,
        111,
        "null",
    )
    direct = direct_api_versions_v0("127.0.0.1", tansu.port)
    apis = broker["apis"]
    assert isinstance(apis, dict)
    broker_listed = {k: v[:2] for k, v in apis.items() if v is not None}
    assert broker_listed == direct
    for key, row in apis.items():
        entry = registry.API_KEYS.get(key)
        if row is None:  # the package has it, the broker does not
            assert entry is not None and key not in direct
            continue
        assert row[2] == expected_marker(entry, row[0], row[1]), key
    assert apis[18] == (0, 4, "usable: 4")
    assert apis[3] == (0, 12, "usable: 12")
    assert apis[0] == (0, 11, None)  # Produce: the shipped specs have no codec for it
    assert apis[57] is None  # UpdateFeatures: not on Tansu
    assert out.splitlines()[1] == "\tProduce(0): 0 to 11,"
    assert broker["release_guess"] == str(guess_broker_release(direct))


def test_judged_against_a_whole_spec_set_every_api_has_a_marker(
    tansu: TansuHandle, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """With the newest corpus (a spec for every API Tansu has), every API the broker lists
    carries Kafka's marker, and the ranges are those of a raw ApiVersions v0 exchange."""
    specs = str(genpkg.newest_corpus())
    code, out, err = run_cli(
        capsys, "--bootstrap-server", tansu.bootstrap, "--timeout", "5", "--specs", specs
    )
    assert code == 0, err
    package = generated_package([Path(specs)])
    registry = package.module("registry")
    names, entries = registry.API_NAMES, registry.API_KEYS
    [broker] = parse_text(out, names)
    apis = broker["apis"]
    assert isinstance(apis, dict)
    direct = direct_api_versions_v0("127.0.0.1", tansu.port)
    assert {k: v[:2] for k, v in apis.items() if v is not None} == direct
    for key, (lo, hi) in direct.items():
        row = apis[key]
        assert row is not None and row[2] is not None, f"api {key} has no marker"
        assert row[2] == expected_marker(entries[key], lo, hi)
    # the APIs of the spec set that Tansu lacks are listed as UNSUPPORTED
    assert {k for k, v in apis.items() if v is None} == set(entries) - set(direct)
    # a second run reuses the cached package: no generation, same answer
    folder = package.path
    stamp = (folder / "registry.py").stat().st_mtime_ns
    code, again, _ = run_cli(
        capsys, "--bootstrap-server", tansu.bootstrap, "--timeout", "5", "--specs", specs
    )
    assert (code, again) == (0, out)
    assert (folder / "registry.py").stat().st_mtime_ns == stamp


def test_judged_against_a_release(
    tansu: TansuHandle, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    """``--release 4.1``: the package comes from Kafka's bundled 4.1.2 spec data, and a
    last line says so (the JSON has it as ``spec_set``)."""
    args = ("--bootstrap-server", tansu.bootstrap, "--timeout", "5", "--release", "4.1")
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    body, _, last = out.rpartition("usable versions judged against ")
    assert last == "Kafka 4.1.0 (spec data of 4.1.2)\n"
    registry_41 = generated_package(SpecSet.of_release("4.1.2")).module("registry")
    [broker] = parse_text(body, registry_41.API_NAMES)
    apis = broker["apis"]
    assert isinstance(apis, dict)
    direct = direct_api_versions_v0("127.0.0.1", tansu.port)
    for key, (lo, hi) in direct.items():
        assert apis[key] == (lo, hi, expected_marker(registry_41.API_KEYS.get(key), lo, hi))
    assert registry_41.API_KEYS[0].min_version == 3  # Produce 3-13 in 4.1: Tansu's 0-11 ...
    assert apis[0] == (direct[0][0], direct[0][1], f"usable: {min(13, direct[0][1])}")
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    assert json.loads(out)["spec_set"] == "Kafka 4.1.0 (spec data of 4.1.2)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--release", "0.11"], "Kafka's JSON specs start at 2.4: release 0.11.0.0 has none"),
        (["--release", "3.x"], "'3.x' is not a Kafka release"),
    ],
)
def test_release_mistakes_are_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "--bootstrap-server", "127.0.0.1:9", *args)
    assert (code, out) == (2, "")
    assert err.startswith(f"kafka-specgen broker-versions: {message}")
    assert err.count("\n") == 1


def test_json_output_holds_the_same_facts(
    tansu: TansuHandle, capsys: pytest.CaptureFixture[str]  # noqa: F811
) -> None:
    code, text, _ = run_cli(capsys, "--bootstrap-server", tansu.bootstrap, "--timeout", "5")
    assert code == 0
    code, out, err = run_cli(
        capsys, "--bootstrap-server", tansu.bootstrap, "--timeout", "5", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    [broker] = data["brokers"]
    assert (broker["node_id"], broker["host"], broker["port"], broker["rack"]) == (
        111,
        "127.0.0.1",
        tansu.port,
        None,
    )
    assert broker["api_versions_version"] == ApiVersionsRequest.MAX_VERSION
    assert broker["downgraded_from"] == []
    from_text = parse_text(text, registry.API_NAMES)[0]["apis"]
    assert isinstance(from_text, dict)
    from_json = {
        row["api_key"]: (
            None
            if row["broker"] is None
            else (
                row["broker"]["min"],
                row["broker"]["max"],
                row["marker"] and row["marker"].replace("unusable: ", ""),
            )
        )
        for row in broker["apis"]
    }
    assert from_json == from_text
    usable = {row["api_key"]: row["usable"] for row in broker["apis"]}
    assert usable[18] == 4 and usable[0] is None
    names = {row["api_key"]: row["name"] for row in broker["apis"]}
    assert names[0] == "Produce" and names[18] == "ApiVersions"
    keys = [row["api_key"] for row in broker["apis"]]
    assert keys == sorted(keys)


def test_command_line_entry_point(tansu: TansuHandle) -> None:  # noqa: F811
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafka_specgen.cli",
            "broker-versions",
            "--bootstrap-server",
            tansu.bootstrap,
            "--timeout",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"127.0.0.1:{tansu.port} (id: 111 rack: null) -> (\n\t")
    assert "\tApiVersions(18): 0 to 4 [usable: 4],\n" in result.stdout
    assert re.search(r"\n\)\nrelease guess: [^\n]+\n\Z", result.stdout)


# --- fake brokers --------------------------------------------------------------------------


class FakeServer:
    """A loopback listener serving each connection with ``handler`` in a thread."""

    def __init__(self, handler: Callable[[socket.socket, "FakeServer"], None]) -> None:
        self.handler = handler
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = int(self.sock.getsockname()[1])
        self.stopping = threading.Event()
        self.requests: list[tuple[int, int]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            conn.settimeout(5)
            with conn:
                try:
                    self.handler(conn, self)
                except OSError:
                    pass

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=5)
        self.sock.close()


def read_frame(conn: socket.socket) -> bytes | None:
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data[4:]


FAKE_VERSIONS = {3: (0, 12), 18: (0, 2), 4242: (0, 1), 0: (5, 5)}


def old_broker(
    conn: socket.socket,
    server: FakeServer,
    versions: dict[int, tuple[int, int]] = FAKE_VERSIONS,
) -> None:
    """A broker that knows ApiVersions 0-2 and downgrades as KIP-511 says."""
    for _ in range(10):
        frame = read_frame(conn)
        if frame is None:
            return
        key, version, correlation_id = struct.unpack_from(">hhi", frame, 0)
        server.requests.append((key, version))
        header = ResponseHeader(correlation_id=correlation_id)
        if key == 18 and version > 2:
            body = struct.pack(">hihhh", 35, 1, 18, 0, 2)  # v0 body, error 35
            reply = header.encode(0) + body
        elif key == 18:
            response = ApiVersionsResponse(
                api_keys=[
                    ApiVersionsResponseApiVersion(k, lo, hi) for k, (lo, hi) in versions.items()
                ]
            )
            reply = framing.encode_response(header, response, 18, version)
        elif key == 3:
            response = MetadataResponse(
                brokers=[MetadataResponseBroker(7, "127.0.0.1", server.port, "r1")]
            )
            reply = framing.encode_response(header, response, 3, version)
        else:
            return
        conn.sendall(framing.add_size_prefix(reply))


@pytest.fixture
def fake() -> Iterator[Callable[[Callable[[socket.socket, FakeServer], None]], FakeServer]]:
    servers: list[FakeServer] = []

    def start(handler: Callable[[socket.socket, FakeServer], None]) -> FakeServer:
        servers.append(FakeServer(handler))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def test_kip511_downgrade_against_an_old_broker(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    server = fake(old_broker)
    code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "2")
    assert code == 0, err
    newest = ApiVersionsRequest.MAX_VERSION
    # bootstrap connection, then the broker's own: each asks at the newest, then at 2
    api_versions_asked = [v for k, v in server.requests if k == 18]
    assert api_versions_asked == [newest, 2, newest, 2]
    assert (3, 12) in server.requests  # Metadata at the newest common version
    assert out == (
        f"127.0.0.1:{server.port} (id: 7 rack: r1) -> (\n"
        "\tProduce(0): 5,\n"
        "\tMetadata(3): 0 to 12 [usable: 12],\n"
        "\tApiVersions(18): 0 to 2 [usable: 2],\n"
        "\tUpdateFeatures(57): UNSUPPORTED,\n"
        "\tUNKNOWN(4242): 0 to 1\n"
        ")\n"
        f"release guess: {guess_broker_release(FAKE_VERSIONS, Features())}\n"
    )
    code, out, err = run_cli(
        capsys, "--bootstrap-server", server.bootstrap, "--timeout", "2", "--json"
    )
    assert code == 0, err
    [broker] = json.loads(out)["brokers"]
    assert broker["api_versions_version"] == 2
    assert broker["downgraded_from"] == [newest]
    assert broker["release_guess"] == str(guess_broker_release(FAKE_VERSIONS, Features()))
    assert broker["features"] == {"supported": {}, "finalized": {}, "epoch": -1}
    assert broker["rack"] == "r1"
    unknown = [row for row in broker["apis"] if row["api_key"] == 4242]
    assert unknown == [
        {
            "api_key": 4242,
            "name": "UNKNOWN(4242)",
            "broker": {"min": 0, "max": 1},
            "package": None,
            "usable": None,
            "marker": None,
        }
    ]


def release_broker(name: str, kraft: bool = False) -> Callable[[socket.socket, FakeServer], None]:
    """A broker that answers ApiVersions as the table's row for ``name`` does, features
    included (epoch 7), and Metadata."""
    row = broker_releases.release(name, kraft=kraft)
    features = row.features
    assert features is not None

    def handle(conn: socket.socket, server: FakeServer) -> None:
        for _ in range(10):
            frame = read_frame(conn)
            if frame is None:
                return
            key, version, correlation_id = struct.unpack_from(">hhi", frame, 0)
            server.requests.append((key, version))
            header = ResponseHeader(correlation_id=correlation_id)
            if key == 18:
                response = ApiVersionsResponse(
                    api_keys=[
                        ApiVersionsResponseApiVersion(k, lo, hi)
                        for k, (lo, hi) in row.advertised().items()
                    ],
                    supported_features=[
                        ApiVersionsResponseSupportedFeatureKey(n, lo, hi)
                        for n, (lo, hi) in features.supported_in(version).items()
                    ],
                    finalized_features=[
                        ApiVersionsResponseFinalizedFeatureKey(n, level, level)
                        for n, level in features.finalized.items()
                    ],
                    finalized_features_epoch=7,
                )
            elif key == 3:
                response = MetadataResponse(
                    brokers=[MetadataResponseBroker(1, "127.0.0.1", server.port, None)]
                )
            else:
                return
            reply = framing.encode_response(header, response, key, version)
            conn.sendall(framing.add_size_prefix(reply))

    return handle


def test_features_as_kafka_features_describes_them(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    server = fake(release_broker("4.0.1"))
    code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "2")
    assert code == 0, err
    lines = out.splitlines()
    at = lines.index("release guess: 4.0.1")
    assert lines[at + 1 :] == [
        "Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0"
        "\tSupportedMaxVersion: 1\tFinalizedVersionLevel: 0\tEpoch: 7",
        "Feature: group.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1"
        "\tFinalizedVersionLevel: 1\tEpoch: 7",
        "Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1"
        "\tFinalizedVersionLevel: 0\tEpoch: 7",
        "Feature: metadata.version\tSupportedMinVersion: 3.3-IV3\tSupportedMaxVersion: 4.0-IV3"
        "\tFinalizedVersionLevel: 4.0-IV3\tEpoch: 7",
        "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2"
        "\tFinalizedVersionLevel: 2\tEpoch: 7",
    ]
    [broker] = parse_text(out, registry.API_NAMES)
    assert len(broker["features"]) == 5  # type: ignore[arg-type]
    code, out, err = run_cli(
        capsys, "--bootstrap-server", server.bootstrap, "--timeout", "2", "--json"
    )
    [broker] = json.loads(out)["brokers"]
    assert broker["features"]["supported"]["metadata.version"] == {"min": 7, "max": 25}
    assert broker["features"]["finalized"] == {
        "group.version": 1,
        "metadata.version": 25,
        "transaction.version": 2,
    }
    assert broker["features"]["epoch"] == 7
    assert broker["release_guess"] == "4.0.1"


def test_tied_ranges_are_told_apart_by_features(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    """KRaft 3.3 and 3.4 brokers advertise the same ranges; metadata.version differs. Both
    answer ApiVersions v3 at most, which still carries features."""
    for name, top in (("3.3", "3.3-IV3"), ("3.4", "3.4-IV0")):
        server = fake(release_broker(name, kraft=True))
        code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "2")
        assert code == 0, err
        assert f"release guess: {name}.0 (KRaft)\n" in out
        assert f"SupportedMaxVersion: {top}\tFinalizedVersionLevel: {top}\tEpoch: 7" in out


def test_too_new_and_too_old_as_kafka_prints_them(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    """Judged with a Kafka 4.x spec set (Produce 3-13): a broker with only Produce 0-2 is
    too old for it, one whose Fetch starts above the set's newest is too new."""
    versions = {0: (0, 2), 1: (99, 100), 3: (0, 12), 18: (0, 3)}
    server = fake(lambda conn, srv: old_broker(conn, srv, versions))
    code, out, err = run_cli(
        capsys,
        "--bootstrap-server",
        server.bootstrap,
        "--timeout",
        "2",
        "--specs",
        str(genpkg.kafka_python_specs()),
    )
    assert code == 0, err
    lines = out.splitlines()
    assert "\tProduce(0): 0 to 2 [unusable: node too old]," in lines
    assert "\tFetch(1): 99 to 100 [unusable: node too new]," in lines
    assert "\tMetadata(3): 0 to 12 [usable: 12]," in lines
    assert "\tListOffsets(2): UNSUPPORTED," in lines


def test_reply_with_the_wrong_correlation_id(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    def liar(conn: socket.socket, server: FakeServer) -> None:
        frame = read_frame(conn)
        assert frame is not None
        (correlation_id,) = struct.unpack_from(">i", frame, 4)
        response = ApiVersionsResponse(api_keys=[ApiVersionsResponseApiVersion(18, 0, 4)])
        header = ResponseHeader(correlation_id=correlation_id + 1000)
        reply = framing.encode_response(header, response, 18, ApiVersionsRequest.MAX_VERSION)
        conn.sendall(framing.add_size_prefix(reply))

    server = fake(liar)
    code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "1")
    check_one_line_error(
        code,
        out,
        err,
        rf"127\.0\.0\.1:{server.port}: unknown correlation id: a response with correlation id "
        r"1000, which no request in flight has",
    )


def check_one_line_error(code: int, out: str, err: str, pattern: str) -> None:
    assert code == 1
    assert out == ""
    assert "Traceback" not in err
    assert err.count("\n") == 1, err
    assert re.fullmatch(r"kafka-specgen broker-versions: " + pattern + r"\n", err), err


def test_closed_port(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    code, out, err = run_cli(capsys, "--bootstrap-server", f"127.0.0.1:{port}", "--timeout", "1")
    check_one_line_error(code, out, err, rf"127\.0\.0\.1:{port}: cannot connect: .*refused.*")


def test_listener_sending_garbage(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    def http(conn: socket.socket, server: FakeServer) -> None:
        read_frame(conn)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    server = fake(http)
    code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "1")
    check_one_line_error(code, out, err, rf"127\.0\.0\.1:{server.port}: garbage reply .*")


def test_listener_sending_a_well_framed_garbage_body(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    def junk(conn: socket.socket, server: FakeServer) -> None:
        frame = read_frame(conn)
        assert frame is not None
        reply = frame[4:8] + b"\x00\x00\xff\xff\xff"  # right correlation id, broken body
        conn.sendall(struct.pack(">i", len(reply)) + reply)

    server = fake(junk)
    code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "1")
    check_one_line_error(
        code,
        out,
        err,
        rf"127\.0\.0\.1:{server.port}: garbage reply \(ApiVersions v\d+ response does not decode: .*",
    )


def test_listener_closing_mid_reply(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    def hang_up(conn: socket.socket, server: FakeServer) -> None:
        read_frame(conn)
        conn.sendall(b"\x00\x00\x00\x20\x00\x00")

    server = fake(hang_up)
    code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "1")
    check_one_line_error(
        code, out, err, r".*closed before a full reply arrived \(.*it may predate Kafka 0\.10.*"
    )


def test_listener_that_never_answers(
    fake: Callable[..., FakeServer], capsys: pytest.CaptureFixture[str]
) -> None:
    silent = threading.Event()

    def mute(conn: socket.socket, server: FakeServer) -> None:
        read_frame(conn)
        silent.wait(3)

    server = fake(mute)
    try:
        code, out, err = run_cli(capsys, "--bootstrap-server", server.bootstrap, "--timeout", "0.3")
    finally:
        silent.set()
    check_one_line_error(
        code, out, err, rf"127\.0\.0\.1:{server.port}: no reply within 0\.3 s \(.*ApiVersions.*\)"
    )


@pytest.mark.parametrize("address", ["localhost", "host:", ":9092", "h:99999", "h:x"])
def test_bad_bootstrap_address(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "--bootstrap-server", address)
    check_one_line_error(code, out, err, r".* is not HOST:PORT")
