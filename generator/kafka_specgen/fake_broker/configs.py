"""DescribeConfigs: a topic's configs as created, over a few defaults."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .apikeys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

#: What DescribeConfigs says of a topic or broker it was not told otherwise.
DEFAULT_CONFIGS = {
    "cleanup.policy": "delete",
    "compression.type": "producer",
    "message.format.version": "3.0-IV1",
    "retention.ms": "604800000",
}
TOPIC, BROKER = 2, 4
DYNAMIC_TOPIC_CONFIG, DEFAULT_CONFIG = 1, 5  # config sources
NAMES = Names(absent={"is_default": False})  # the v0 field, gone from Kafka 4.0's specs


class ResourceIn(Protocol):
    resource_type: int
    resource_name: str
    configuration_keys: Sequence[str] | None


class DescribeConfigsIn(Protocol):
    resources: Sequence[ResourceIn]


def describe_configs(call: Call) -> Any:
    req: DescribeConfigsIn = call.read(DescribeConfigsIn)
    result_class = call.item(call.response, "results")
    config_class = call.item(result_class, "configs")
    results = []
    for r in req.resources:
        topic = call.state.topics.get(r.resource_name) if r.resource_type == TOPIC else None
        if r.resource_type == TOPIC and topic is None:
            results.append(
                call.build(
                    result_class,
                    error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                    resource_type=r.resource_type,
                    resource_name=r.resource_name,
                )
            )
            continue
        own = topic.configs if topic is not None else {}
        configs = {**DEFAULT_CONFIGS, **own}
        wanted = r.configuration_keys
        entries = [
            call.build(
                config_class,
                name=k,
                value=v,
                read_only=r.resource_type == BROKER,
                is_default=k not in own,
                config_source=DYNAMIC_TOPIC_CONFIG if k in own else DEFAULT_CONFIG,
                is_sensitive=False,
            )
            for k, v in sorted(configs.items())
            if wanted is None or k in wanted
        ]
        results.append(
            call.build(
                result_class,
                error_code=ErrorCode.NONE,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
                configs=entries,
            )
        )
    return call.respond(results=results)


HANDLERS = (Handler(ApiKey.DESCRIBE_CONFIGS, (0, 4), describe_configs, NAMES, DescribeConfigsIn),)
