"""A Kafka broker's request log (``kafka.request.logger`` at DEBUG), written from a capture
file: one line per request, as apache/kafka's ``RequestChannel.scala`` writes it with
``RequestConvertToJson`` and the default log4j pattern ``[%d] %p %m (%c)%n``.

The lines hold what the broker would log: the request header (with
``requestApiKeyName`` and, for a deprecated version, ``requestApiVersionDeprecated`` and
level INFO), the request and the response as JSON (camelCase field names; ApiVersions and
Metadata in full, other bodies as ``{}`` since the pipeline does not read them), the
connection id ``broker:port-client:port-index``, timings, the security protocol,
principal, listener and the connection's client information (``unknown`` until an
ApiVersionsRequest v3+ named the software, KIP-511). Tests use it to feed the pipeline the
same traffic as a log and as bytes.
"""

from __future__ import annotations

import importlib
import json
import re
import time
from pathlib import Path
from typing import Any, Iterable

from kafka_specgen.capture import frames as fr

LOGGER = "kafka.request.logger"


def camel(value: Any) -> Any:
    """``to_dict()`` form -> Kafka's JSON converters' form (``api_keys`` -> ``apiKeys``)."""
    if isinstance(value, dict):
        return {
            re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), k): camel(v)
            for k, v in value.items()
            if k != "unknown_tagged_fields"
        }
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def stamp(ts: float) -> str:
    """log4j's ``%d``: ``2025-03-18 10:00:00,123`` (written here in UTC)."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ts)) + f",{int(ts % 1 * 1000):03d}"


def entry_line(
    ts: float,
    header: dict[str, Any],
    request: Any,
    response: Any,
    connection: str,
    software: tuple[str, str] | None,
    *,
    deprecated: bool = False,
    principal: str = "User:ANONYMOUS",
    listener: str = "PLAINTEXT",
    forwarded: bool = False,
) -> str:
    """One request log line."""
    if deprecated:
        header = {**header, "requestApiVersionDeprecated": True}
    entry = {
        "isForwarded": forwarded,
        "requestHeader": header,
        "request": request,
        "response": response,
        "connection": connection,
        "totalTimeMs": 0.512,
        "requestQueueTimeMs": 0.021,
        "localTimeMs": 0.301,
        "remoteTimeMs": 0.0,
        "throttleTimeMs": 0,
        "responseQueueTimeMs": 0.043,
        "sendTimeMs": 0.147,
        "securityProtocol": "PLAINTEXT",
        "principal": principal,
        "listener": listener,
        "clientInformation": {
            "softwareName": software[0] if software else "unknown",
            "softwareVersion": software[1] if software else "unknown",
        },
    }
    level = "INFO" if deprecated else "DEBUG"
    body = json.dumps(entry, separators=(",", ":"))
    return f"[{stamp(ts)}] {level} Completed request:{body} ({LOGGER})\n"


def log_from_capture(
    capture: Path,
    out: Path,
    package: str,
    *,
    deprecated: Iterable[tuple[int, int]] = (),
    broker: str = "10.0.0.2:9092",
) -> int:
    """Write the request log a broker would have written for the traffic of ``capture``
    (decoded with ``package``); returns the number of lines. ``deprecated``: the
    (api key, version) pairs the broker marks deprecated."""
    framing = importlib.import_module(f"{package}.framing")
    registry = importlib.import_module(f"{package}.registry")
    marked = set(deprecated)
    rows = [r for r in fr.capture_rows(str(capture)) if r.error is None]
    responses = {(r.conn, r.correlation_id): r for r in rows if r.direction == "response"}
    software: dict[str, tuple[str, str]] = {}
    lines = []
    for row in rows:
        if row.direction != "request" or row.api_key is None or row.api_version is None:
            continue
        header, body = framing.decode_request(row.frame)
        request = camel(body.to_dict()) if row.api_key in (3, 18) else {}
        answer = responses.get((row.conn, row.correlation_id))
        response: Any = ""
        if answer is not None:
            _, decoded = framing.decode_response(answer.frame, row.api_key, row.api_version)
            response = camel(decoded.to_dict()) if row.api_key in (3, 18) else {}
        client = row.src or f"10.0.1.{row.conn.rpartition('#')[2]}:50000"
        connection = f"{row.dst or broker}-{client}-{row.conn.rpartition('#')[2]}"
        log_header = {
            "requestApiKey": row.api_key,
            "requestApiVersion": row.api_version,
            "correlationId": row.correlation_id,
            "clientId": row.client_id,
            "requestApiKeyName": str(registry.api_name(row.api_key)).upper(),
        }
        # the broker registers the software of an ApiVersionsRequest before it builds the
        # request's context (apache/kafka SocketServer.scala): its own line names it
        name = getattr(body, "client_software_name", None)
        if row.api_key == 18 and name:
            software[row.conn] = (name, body.client_software_version)
        lines.append(
            entry_line(
                row.ts or 0.0,
                log_header,
                request,
                response,
                connection,
                software.get(row.conn),
                deprecated=(row.api_key, row.api_version) in marked,
            )
        )
    out.write_text("".join(lines), encoding="utf-8")
    return len(lines)
