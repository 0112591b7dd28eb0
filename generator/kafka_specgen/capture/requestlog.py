"""The broker's own request log as pipeline input (standard library only).

With ``kafka.request.logger`` at DEBUG, a Kafka broker (2.8 or later) writes one line per
request it completed, JSON after a log4j prefix (apache/kafka ``RequestChannel.scala``,
``RequestConvertToJson.java``; the default pattern is ``[%d] %p %m (%c)%n``)::

    [2025-03-18 10:00:00,123] DEBUG Completed request:{"isForwarded":false,
    "requestHeader":{"requestApiKey":3,"requestApiVersion":12,"correlationId":5,
    "clientId":"app-1","requestApiKeyName":"METADATA"},"request":{...},"response":{...},
    "connection":"10.0.0.2:9092-10.0.0.7:51234-3","totalTimeMs":0.4,...,
    "securityProtocol":"SSL","principal":"User:app","listener":"SSL",
    "clientInformation":{"softwareName":"apache-kafka-java","softwareVersion":"3.7.0"}}
    (kafka.request.logger)

Since Kafka 3.9.1 and 4.0, requests at a deprecated version are logged at INFO and the
rest at DEBUG (``requestApiVersionDeprecated`` marks them): a logger at INFO writes only
those. Either way each line is one request, and TLS does not hide it.

``log_rows(path)`` gives one ``frames.Row`` per entry: ``src`` the client and ``dst`` the
broker (from ``connection``: ``local-remote-index``), the header's api key, version,
correlation id and client id, and in ``frame`` a small JSON of what the pipeline uses
(``entry_facts``): the client's software, the ApiVersions answer's ranges, the brokers a
Metadata answer names, the principal and listener. No bytes of the request: such rows feed
usage and readiness, never conformance or ``messages/``. A line that mentions ``Completed
request:`` and cannot be read is an error row; other lines (other loggers, stack traces)
are not requests and are skipped. Entries a controller logs for requests a broker
forwarded to it (``isForwarded``) are skipped too: the broker logged the request itself.

The log4j time stamp has no time zone: it is read as UTC.
"""

from __future__ import annotations

import json
import os
import re
from calendar import timegm
from typing import Any, Iterator

from ..api_keys import ApiKey
from .frames import KEPT_BYTES, MAX_LINE, REQUEST_LOG, Row, file_lines, line_error

MARKER = b"Completed request:"
_STAMP = re.compile(rb"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[,.](\d{1,9}))?")
_CONNECTION = re.compile(r"^(.+:\d+)-(.+:\d+)-(\d+)$")
#: KIP-511: a client that sent no software name is "unknown" in the broker's log.
UNKNOWN = "unknown"


def looks_like_request_log(path: str, sniff: int = 1 << 16) -> bool:
    """Whether the first ``sniff`` bytes of a file hold a request log line."""
    with open(path, "rb") as f:
        return MARKER in f.read(sniff)


def log_rows(
    path: str, start: int = 0, end: int | None = None, name: str | None = None
) -> Iterator[Row]:
    """Rows of the request log lines starting in the byte range ``[start, end)`` (ranges
    that tile a file read every line once, as ``frames.capture_rows``)."""
    name = name or os.path.basename(path)
    for line_no, line, size in file_lines(path, start, end, MAX_LINE):
        if MARKER not in line[: KEPT_BYTES if size > MAX_LINE else None]:
            continue
        if size > MAX_LINE:
            why = f"a request log line of {size} bytes, more than {MAX_LINE}"
            yield line_error(name, line_no, line, why, REQUEST_LOG)
            continue
        try:
            row = entry_row(line, name)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            what = "key missing" if isinstance(exc, KeyError) else type(exc).__name__
            why = f"not a request log entry of Kafka 2.8 or later ({what}: {exc})"
            yield line_error(name, line_no, line, why, REQUEST_LOG)
            continue
        if row is not None:
            yield row


def entry_row(line: bytes, name: str) -> Row | None:
    """One request log line -> a row (None for an entry forwarded by another broker)."""
    prefix, _, rest = line.partition(MARKER)
    text = rest.rstrip()
    # the logger's name follows the JSON in parentheses: cut after the JSON's last brace
    entry = json.loads(text[: text.rindex(b"}") + 1])
    if not isinstance(entry, dict):
        raise ValueError("the entry is not a JSON object")
    if entry.get("isForwarded") is True:
        return None
    header = entry["requestHeader"]
    api_key = _int(header, "requestApiKey", 2**15)
    api_version = _int(header, "requestApiVersion", 2**15)
    correlation_id = _int(header, "correlationId", 2**31)
    client_id = header.get("clientId")
    if client_id is not None and not isinstance(client_id, str):
        raise TypeError(f"clientId is {type(client_id).__name__}, not text")
    connection = entry.get("connection")
    broker = client = None
    if isinstance(connection, str) and (match := _CONNECTION.match(connection)):
        broker, client = match.group(1), match.group(2)
    return Row(
        conn=f"{name}#{connection}",
        ts=timestamp(prefix),
        src=client,
        dst=broker,
        direction="request",
        api_key=api_key,
        api_version=api_version,
        correlation_id=correlation_id,
        client_id=client_id,
        frame=json.dumps(entry_facts(entry, api_key), separators=(",", ":")).encode(),
        error=None,
        source=REQUEST_LOG,
    )


def _int(header: dict[str, Any], key: str, bound: int) -> int:
    value = header[key]
    if isinstance(value, bool) or not isinstance(value, int) or not -bound <= value < bound:
        raise ValueError(f"{key} {value!r} is not an integer in {-bound}..{bound - 1}")
    return value


def timestamp(prefix: bytes) -> float | None:
    """The log4j time stamp of a line's prefix, read as UTC; None if there is none."""
    match = _STAMP.search(prefix)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction: bytes = match.group(7) or b"0"
    try:
        whole: int = timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    return float(whole) + int(fraction) / 10.0 ** len(fraction)


def entry_facts(entry: dict[str, Any], api_key: int) -> dict[str, Any]:
    """What the pipeline keeps of an entry: ``software`` (name, version; KIP-511's
    ``unknown`` is None), ``advertised`` (an ApiVersions answer's ``[key, min, max]``),
    ``brokers`` (the ``host:port`` a Metadata answer names), ``principal``, ``listener``,
    ``deprecated`` (the broker marks the version deprecated)."""
    info = entry.get("clientInformation")
    name = version = None
    if isinstance(info, dict):
        name = _known(info.get("softwareName"))
        version = _known(info.get("softwareVersion"))
    request, response = entry.get("request"), entry.get("response")
    if api_key == ApiKey.API_VERSIONS and isinstance(request, dict) and name is None:
        # the connection's first ApiVersions request carries the name before the broker
        # has recorded it for the connection
        name = _known(request.get("clientSoftwareName"))
        version = _known(request.get("clientSoftwareVersion"))
    facts: dict[str, Any] = {"software": [name, version] if name else None}
    if (
        api_key == ApiKey.API_VERSIONS
        and isinstance(response, dict)
        and not response.get("errorCode")
    ):
        facts["advertised"] = [
            [k["apiKey"], k["minVersion"], k["maxVersion"]]
            for k in response.get("apiKeys") or ()
            if isinstance(k, dict) and {"apiKey", "minVersion", "maxVersion"} <= k.keys()
        ]
    if api_key == ApiKey.METADATA and isinstance(response, dict):
        facts["brokers"] = [
            f"{b['host']}:{b['port']}"
            for b in response.get("brokers") or ()
            if isinstance(b, dict) and "host" in b and "port" in b
        ]
    for key in ("principal", "listener"):
        if isinstance(entry.get(key), str):
            facts[key] = entry[key]
    if entry["requestHeader"].get("requestApiVersionDeprecated") is True:
        facts["deprecated"] = True
    return facts


def _known(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != UNKNOWN else None
