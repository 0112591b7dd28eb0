"""``error_codes``: the walk over a response's error codes and the typed exception."""

from __future__ import annotations

import pytest

from kafka_messages.error_codes import ErrorCode, errors_in, raise_for_errors
from kafka_messages.errors import ProtocolError
from kafka_messages.metadata import (
    MetadataResponse,
    MetadataResponsePartition,
    MetadataResponseTopic,
)


def response(topic_error: int, partition_errors: tuple[int, ...]) -> MetadataResponse:
    partitions = [
        MetadataResponsePartition(partition_index=i, error_code=code)
        for i, code in enumerate(partition_errors)
    ]
    return MetadataResponse(
        topics=[
            MetadataResponseTopic(name="ok", error_code=0),
            MetadataResponseTopic(name="t", error_code=topic_error, partitions=partitions),
        ]
    )


def test_errors_in_walks_every_error_code_with_its_path() -> None:
    found = list(errors_in(response(3, (0, 6, 0, 5))))
    assert found == [
        ("topics[1].error_code", 3),
        ("topics[1].partitions[1].error_code", 6),
        ("topics[1].partitions[3].error_code", 5),
    ]
    assert [type(error) for _, error in found] == [ErrorCode] * 3
    assert found[1][1] is ErrorCode.NOT_LEADER_OR_FOLLOWER and found[1][1].retriable
    assert list(errors_in(response(0, (0, 0)))) == []


def test_errors_in_names_codes_this_package_does_not_know() -> None:
    [(path, error)] = errors_in(response(0, (0, 9999)))
    assert path == "topics[1].partitions[1].error_code"
    assert isinstance(error, ErrorCode) and error == 9999
    assert (error.name, error.retriable) == ("UNKNOWN_ERROR_CODE(9999)", False)
    with pytest.raises(ValueError):
        ErrorCode(9999)  # the enum itself still refuses it


def test_raise_for_errors_raises_the_first_with_its_facts() -> None:
    raise_for_errors(response(0, (0,)))  # nothing to raise
    with pytest.raises(ProtocolError) as caught:
        raise_for_errors(response(0, (0, 35)))
    error = caught.value
    assert (error.code, error.name, error.path) == (
        35,
        "UNSUPPORTED_VERSION",
        "topics[1].partitions[1].error_code",
    )
    assert error.retriable is ErrorCode.UNSUPPORTED_VERSION.retriable is False
    with pytest.raises(ProtocolError) as caught:
        raise_for_errors(response(6, ()))
    assert caught.value.retriable is True  # NOT_LEADER_OR_FOLLOWER
    assert str(caught.value) == "topics[1].error_code: NOT_LEADER_OR_FOLLOWER (6, retriable)"
    with pytest.raises(ProtocolError) as caught:
        raise_for_errors(response(-2000, ()))
    assert caught.value.name == "UNKNOWN_ERROR_CODE(-2000)" and not caught.value.retriable
