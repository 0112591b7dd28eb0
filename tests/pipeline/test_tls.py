"""TLS, live: kafka-python speaks TLS to ``kafka-specgen capture``, which terminates it
(``--tls-cert``/``--tls-key``, writing the session keys with ``--tls-keylog``) and relays
to Tansu (plain, or TLS through a terminator in front of it: ``--upstream-ca``). A wire
recorder between the client and the proxy keeps the encrypted bytes, written as a pcap.

The capture file holds the plaintext frames; the pcap, decrypted with the key log
(``pipeline.tls``), gives the very same frames, for TLS 1.3 and for TLS 1.2 with AES-GCM
and with ChaCha20-Poly1305. Without the key log each TLS connection is error rows that
say what is needed, and the pipeline's summary says it in one line."""

from __future__ import annotations

import signal
import ssl
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from kafka_specgen.capture import frames as fr
from kafka_specgen.capture import pcap
from kafka_specgen.pipeline.job import run_pipeline
from kafka_specgen.capture.tls import NEEDS_KEYS, read_keylog
from tests.pipeline.conftest import golden_specs
from tests.support.mixed_fleet import HOST, ROOT, wait_port
from bench.tansu import free_port, start_tansu
from tests.support.tls_wire import Relay, make_cert, write_pcap

#: (name, client context settings, TLS onward to the broker)
SESSIONS = {
    "tls13": ({"minimum_version": ssl.TLSVersion.TLSv1_3}, True),
    "tls12-aes-gcm": (
        {"maximum_version": ssl.TLSVersion.TLSv1_2, "ciphers": "ECDHE-RSA-AES128-GCM-SHA256"},
        False,
    ),
    "tls12-chacha20": (
        {"maximum_version": ssl.TLSVersion.TLSv1_2, "ciphers": "ECDHE-RSA-CHACHA20-POLY1305"},
        False,
    ),
}


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_cert(tmp_path_factory.mktemp("certs"))


def client_context(cert: Path, settings: dict[str, Any]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(cert))
    for key, value in settings.items():
        if key == "ciphers":
            context.set_ciphers(value)
        else:
            setattr(context, key, value)
    return context


def kafka_python_session(bootstrap: str, context: ssl.SSLContext) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    tls: dict[str, Any] = {"security_protocol": "SSL", "ssl_context": context}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="tls-admin", **tls)
    admin.create_topics([NewTopic("tls-topic", 1, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="tls-producer", **tls)
    for i in range(5):
        producer.send("tls-topic", b"secret %d" % i, partition=0)
    producer.flush(10)
    producer.close(5)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, client_id="tls-consumer", group_id=None, **tls
    )
    tp = TopicPartition("tls-topic", 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)
    assert sum(len(r) for r in consumer.poll(timeout_ms=5000).values()) == 5
    consumer.close()


def record_tls_session(folder: Path, certs: tuple[Path, Path], name: str) -> dict[str, Path]:
    """Run the session; returns the capture file, the pcap and the key log."""
    cert, key = certs
    settings, onward = SESSIONS[name]
    proxy_port = free_port()
    wire = Relay((HOST, proxy_port), record=True)
    broker = start_tansu(free_port(), advertised_port=wire.port)
    terminator = None
    upstream = broker.port
    if onward:  # the broker speaks TLS: a terminator in front of Tansu
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server.load_cert_chain(str(cert), str(key))
        terminator = Relay((HOST, broker.port), server_tls=server)
        upstream = terminator.port
    paths = {n: folder / f for n, f in (("capture", "cap.jsonl"), ("keys", "keys.log"))}
    command = [sys.executable, "-m", "kafka_specgen.cli", "capture", "--quiet"]
    command += ["--listen", f"{HOST}:{proxy_port}", "--upstream", f"{HOST}:{upstream}"]
    command += ["--tls-cert", str(cert), "--tls-key", str(key)]
    command += ["--tls-keylog", str(paths["keys"]), "--out", str(paths["capture"])]
    command += ["--upstream-ca", str(cert)] if onward else []
    proxy = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        wait_port(proxy_port)
        kafka_python_session(f"{HOST}:{wire.port}", client_context(cert, settings))
    finally:
        proxy.send_signal(signal.SIGINT)
        try:
            _, err = proxy.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proxy.kill()
            _, err = proxy.communicate(timeout=5)
        wire.close()
        if terminator is not None:
            terminator.close()
        broker.stop()
    assert proxy.returncode == 0, err
    paths["pcap"] = folder / "wire.pcap"
    write_pcap(paths["pcap"], wire.connections, proxy_port)
    return paths


def frames_of(rows: list[fr.Row]) -> Counter[tuple[Any, ...]]:
    return Counter(
        (r.direction, r.api_key, r.api_version, r.correlation_id, r.client_id, r.frame)
        for r in rows
    )


@pytest.fixture(scope="module", params=sorted(SESSIONS))
def session(
    request: pytest.FixtureRequest,
    certs: tuple[Path, Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, dict[str, Path]]]:
    yield request.param, record_tls_session(
        tmp_path_factory.mktemp(request.param), certs, request.param
    )


def test_the_capture_holds_the_plaintext_and_the_pcap_decrypts_to_it(
    session: tuple[str, dict[str, Path]],
) -> None:
    name, paths = session
    captured = [r for r in fr.capture_rows(str(paths["capture"]))]
    assert all(r.error is None for r in captured)
    kinds = {(r.direction, r.api_key) for r in captured}
    assert {("request", 0), ("response", 0), ("request", 1), ("request", 19)} <= kinds
    keys = read_keylog(paths["keys"].read_text())
    labels = {label for label, _ in keys}
    assert labels == (
        {"CLIENT_RANDOM"}
        if name.startswith("tls12")
        else {
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            "CLIENT_TRAFFIC_SECRET_0",
            "SERVER_TRAFFIC_SECRET_0",
            "EXPORTER_SECRET",
        }
    )
    decrypted = pcap.pcap_rows(str(paths["pcap"]), keys=keys)
    assert [r.error for r in decrypted if r.error] == []
    assert frames_of(decrypted) == frames_of(captured)


def test_without_the_keys_a_tls_connection_is_error_rows_that_say_so(
    session: tuple[str, dict[str, Path]],
) -> None:
    _, paths = session
    rows = pcap.pcap_rows(str(paths["pcap"]))
    conns = {r.conn for r in rows}
    assert len(rows) == 2 * len(conns) and all(NEEDS_KEYS in (r.error or "") for r in rows)
    wrong = {k: bytes(len(v)) for k, v in read_keylog(paths["keys"].read_text()).items()}
    damaged = pcap.pcap_rows(str(paths["pcap"]), keys=wrong)
    assert damaged and all("does not decrypt" in (r.error or "") for r in damaged)


def test_the_pipeline_decrypts_with_the_key_log_and_asks_for_it_without(
    spark: Any, certs: tuple[Path, Path], tmp_path: Path
) -> None:
    paths = record_tls_session(tmp_path, certs, "tls13")
    captured = [r for r in fr.capture_rows(str(paths["capture"]))]
    with_keys = run_pipeline(
        [paths["pcap"]],
        tmp_path / "out",
        specs=[golden_specs()],
        spark=spark,
        progress=False,
        tls_keylog=paths["keys"],
    )
    assert with_keys.nothing_lost and with_keys.errors == 0
    assert with_keys.frames_read == with_keys.decoded == len(captured)
    without = run_pipeline(
        [paths["pcap"]], tmp_path / "out2", specs=[golden_specs()], spark=spark, progress=False
    )
    assert without.tls_without_keys == without.errors == without.frames_read > 0
    [hint] = [line for line in without.text().splitlines() if "--tls-keylog" in line]
    assert hint.strip().startswith(f"hint: {without.errors} error rows are of TLS connections")
