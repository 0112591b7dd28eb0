"""The pipeline's decoder without Spark: golden frames decode and re-encode, errors are
rows with their reason."""

from __future__ import annotations

from kafka_specgen.capture import frames as fr
from kafka_specgen.pipeline.decode import Decoder, decode_rows
from tests.support.pcaps import GOLDEN


def test_decoder_round_trips_and_reports_errors() -> None:
    rows = list(fr.capture_rows(str(GOLDEN / "handmade_requests.jsonl")))
    decoder = Decoder("kafka_messages")
    out = [decoder.decode(r.direction, r.api_key, r.api_version, r.frame, r.error) for r in rows]
    ok = [o for o in out if o.status == "decoded"]
    assert ok and all(o.reencoded_equal for o in ok)
    assert all(o.reason for o in out if o.status == "error")
    row = rows[0]
    damaged = decoder.decode(row.direction, row.api_key, row.api_version, row.frame[:-1] + b"\xff")
    assert damaged.status == "error" or damaged.reencoded_equal in (True, False)
    cut = decoder.decode("request", None, None, b"\x00\x12")
    assert cut.status == "error" and cut.reason.startswith("DecodeError")
    orphan = decoder.decode("response", None, None, b"\x00\x00\x00\x01")
    assert orphan.status == "error" and "request is not in the capture" in orphan.reason
    assert len(list(decode_rows(rows))) == len(rows)
