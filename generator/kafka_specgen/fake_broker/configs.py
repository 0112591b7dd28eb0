"""DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and ListConfigResources (formerly
ListClientMetricsResources): topic, broker, group and client-metrics configs, each with its
value and where the value comes from, as a broker with no server.properties overrides shows
them (the defaults of ``config_defaults``, the fake cluster's limits as static configs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..api_keys import ApiKey
from .call import Call
from .config_defaults import (
    BROKER,
    BROKER_LOGGER,
    CLIENT_METRICS,
    DEFAULT_CONFIG,
    DYNAMIC_BROKER_CONFIG,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    DYNAMIC_TOPIC_CONFIG,
    GROUP,
    GROUP_CONFIG,
    LIMIT_CONFIGS,
    LIST,
    STATIC_BROKER_CONFIG,
    TOPIC,
    Config,
    release_of,
    table,
    validate,
)
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names
from .state import ClusterState

DESCRIBE_NAMES = Names(
    absent={
        "is_default": False,  # v0, gone from Kafka 4.0's specs
        "include_synonyms": False,
        "include_documentation": False,  # v3 (Kafka 2.6)
        "config_type": 0,
        "documentation": None,
    }
)
LIST_NAMES = Names(
    # ListClientMetricsResources (Kafka 3.7-4.0) became ListConfigResources in 4.1
    renamed={"config_resources": ("client_metrics_resources",), "resource_name": ("name",)},
    absent={"resource_types": (), "resource_type": CLIENT_METRICS},
)
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
#: what ListConfigResources v1 lists when no type is asked for
LISTED_TYPES = (TOPIC, BROKER, CLIENT_METRICS, GROUP)


@dataclass(frozen=True)
class Value:
    name: str
    value: str | None
    source: int


# --- what a config is worth, and where from -------------------------------------------------


def _static(call: Call, name: str, config: Config) -> str | None:
    """The broker's value of ``name`` when the fake cluster's limits set it (as a
    server.properties line would), else None."""
    field_name = LIMIT_CONFIGS.get(name)
    if field_name is None:
        return None
    value = str(getattr(call.limits, field_name))
    return value if value != config.default else None


def broker_chain(call: Call, name: str, config: Config) -> list[Value]:
    """A broker config's values, strongest first: this broker's dynamic value, the
    cluster-wide dynamic default, the static value, the default."""
    state, out = call.state, []
    node = str(call.node.node_id)
    for key, source in ((node, DYNAMIC_BROKER_CONFIG), ("", DYNAMIC_DEFAULT_BROKER_CONFIG)):
        value = state.configs.get((BROKER, key), {}).get(name)
        if value is not None:
            out.append(Value(name, value, source))
    static = _static(call, name, config)
    if static is not None:
        out.append(Value(name, static, STATIC_BROKER_CONFIG))
    out.append(Value(name, config.default, DEFAULT_CONFIG))
    return out


def topic_chain(call: Call, own: dict[str, str], config: Config) -> list[Value]:
    out = []
    if config.name in own:
        out.append(Value(config.name, own[config.name], DYNAMIC_TOPIC_CONFIG))
    if config.synonym is not None:
        brokers = table(BROKER, release_of(call.state.release_name))
        synonym = brokers.get(config.synonym) or Config(config.synonym, config.default, config.type)
        out += [
            v for v in broker_chain(call, config.synonym, synonym) if v.source != DEFAULT_CONFIG
        ]
        out.append(Value(config.synonym, config.default, DEFAULT_CONFIG))
    else:
        out.append(Value(config.name, config.default, DEFAULT_CONFIG))
    return out


def topic_value(call: Call, topic_configs: dict[str, str], name: str) -> str | None:
    """A topic's effective value of ``name`` (its own, else the broker's)."""
    config = table(TOPIC, release_of(call.state.release_name)).get(name)
    if config is None:
        return topic_configs.get(name)
    return topic_chain(call, topic_configs, config)[0].value


def group_value(state: ClusterState, group_id: str, name: str, default: int) -> int:
    """A group config (consumer.session.timeout.ms, ...) set for ``group_id``, else
    ``default`` (the broker's)."""
    try:
        return int(state.configs.get((GROUP, group_id), {})[name])
    except (KeyError, ValueError):
        return default


def group_setting(state: ClusterState, group_id: str, name: str, default: str) -> str:
    return state.configs.get((GROUP, group_id), {}).get(name, default)


# --- DescribeConfigs ------------------------------------------------------------------------


class ResourceIn(Protocol):
    resource_type: int
    resource_name: str
    configuration_keys: Sequence[str] | None


class DescribeConfigsIn(Protocol):
    resources: Sequence[ResourceIn]
    include_synonyms: bool
    include_documentation: bool


def describe_configs(call: Call) -> Any:
    req: DescribeConfigsIn = call.read(DescribeConfigsIn)
    result_class = call.item(call.response, "results")
    results = []
    for r in req.resources:
        code, message, values = _described(call, r)
        wanted = r.configuration_keys
        entries = [
            _entry(call, result_class, r.resource_type, name, chain, req.include_synonyms)
            for name, chain in values
            if wanted is None or name in wanted
        ]
        results.append(
            call.build(
                result_class,
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
                configs=entries if code == ErrorCode.NONE else [],
            )
        )
    return call.respond(results=results)


Described = list[tuple[str, list[Value]]]
"""Config name -> its values, strongest first (the first is what it is worth)."""


def _described(call: Call, r: ResourceIn) -> tuple[ErrorCode, str | None, Described]:
    release = release_of(call.state.release_name)
    name = r.resource_name
    if r.resource_type == TOPIC:
        topic = call.state.topics.get(name)
        if topic is None:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.", []
        known = table(TOPIC, release)
        chains = [(c.name, topic_chain(call, topic.configs, c)) for c in known.values()]
        chains += [
            (k, [Value(k, v, DYNAMIC_TOPIC_CONFIG)])
            for k, v in topic.configs.items()
            if k not in known
        ]
        return ErrorCode.NONE, None, sorted(chains, key=lambda c: c[0])
    if r.resource_type == BROKER:
        if name == "":  # the cluster-wide dynamic defaults only
            own = call.state.configs.get((BROKER, ""), {})
            values = [
                (k, [Value(k, v, DYNAMIC_DEFAULT_BROKER_CONFIG)]) for k, v in sorted(own.items())
            ]
            return ErrorCode.NONE, None, values
        if name != str(call.node.node_id):
            return (
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {call.node.node_id} but received {name}",
                [],
            )
        return (
            ErrorCode.NONE,
            None,
            [(c.name, broker_chain(call, c.name, c)) for c in table(BROKER, release).values()],
        )
    if r.resource_type == GROUP:
        own = call.state.configs.get((GROUP, name), {})
        chains = []
        for config in table(GROUP, release).values():
            chain = (
                [Value(config.name, own[config.name], GROUP_CONFIG)] if config.name in own else []
            )
            default = config.default
            if config.synonym is not None:
                broker = table(BROKER, release).get(config.synonym)
                if broker is not None:
                    default = broker_chain(call, config.synonym, broker)[0].value
            chains.append((config.name, chain + [Value(config.name, default, DEFAULT_CONFIG)]))
        return ErrorCode.NONE, None, chains
    if r.resource_type in (CLIENT_METRICS, BROKER_LOGGER):
        own = call.state.configs.get((r.resource_type, name), {})
        return (
            ErrorCode.NONE,
            None,
            [(k, [Value(k, v, DEFAULT_CONFIG)]) for k, v in sorted(own.items())],
        )
    return ErrorCode.INVALID_REQUEST, f"Unsupported resource type {r.resource_type}", []


def _entry(
    call: Call,
    result_class: type,
    resource_type: int,
    name: str,
    chain: list[Value],
    synonyms: bool,
) -> Any:
    config_class = call.item(result_class, "configs")
    synonym_class = call.item(config_class, "synonyms")
    head = chain[0]
    release = release_of(call.state.release_name)
    known = table(resource_type, release).get(name)
    return call.build(
        config_class,
        name=name,
        value=head.value,
        read_only=resource_type == BROKER and not _dynamic(name, release),
        is_default=head.source == DEFAULT_CONFIG,
        config_source=head.source,
        is_sensitive=False,
        synonyms=(
            [call.build(synonym_class, name=v.name, value=v.value, source=v.source) for v in chain]
            if synonyms
            else []
        ),
        config_type=known.type if known is not None else 0,
        documentation=None,
    )


def _dynamic(name: str, release: tuple[int, int]) -> bool:
    """Whether a broker config may be changed while the broker runs (the server defaults
    of topic configs, and the group coordinator's settings)."""
    synonyms = {c.synonym for c in table(TOPIC, release).values()}
    return name in synonyms or name.startswith("group.") or name.startswith("log.")


# --- AlterConfigs and IncrementalAlterConfigs -----------------------------------------------


class AlterableIn(Protocol):
    name: str
    value: str | None


class AlterResourceIn(Protocol):
    resource_type: int
    resource_name: str
    configs: Sequence[AlterableIn]


class AlterConfigsIn(Protocol):
    resources: Sequence[AlterResourceIn]
    validate_only: bool


class IncrementalIn(Protocol):
    name: str
    config_operation: int
    value: str | None


class IncrementalResourceIn(Protocol):
    resource_type: int
    resource_name: str
    configs: Sequence[IncrementalIn]


class IncrementalAlterConfigsIn(Protocol):
    resources: Sequence[IncrementalResourceIn]
    validate_only: bool


class Refused(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def alter_configs(call: Call) -> Any:
    """The resource's configs become exactly the request's (what it does not name goes
    back to its default)."""
    req: AlterConfigsIn = call.read(AlterConfigsIn)
    answers: list[tuple[Any, ErrorCode, str | None]] = []
    for r in req.resources:
        try:
            target = _target(call, r.resource_type, r.resource_name)
            changed = {c.name: c.value for c in r.configs if c.value is not None}
            for name, value in changed.items():
                _check(call, r.resource_type, name, value)
            if not req.validate_only:
                target.clear()
                target.update(changed)
            answers.append((r, ErrorCode.NONE, None))
        except Refused as refused:
            answers.append((r, refused.code, refused.message))
    return _alter_response(call, answers)


def incremental_alter_configs(call: Call) -> Any:
    req: IncrementalAlterConfigsIn = call.read(IncrementalAlterConfigsIn)
    answers: list[tuple[Any, ErrorCode, str | None]] = []
    for r in req.resources:
        try:
            target = _target(call, r.resource_type, r.resource_name)
            changed = dict(target)
            for c in r.configs:
                _apply(call, r.resource_type, changed, c)
            if not req.validate_only:
                target.clear()
                target.update(changed)
            answers.append((r, ErrorCode.NONE, None))
        except Refused as refused:
            answers.append((r, refused.code, refused.message))
    return _alter_response(call, answers)


def _apply(call: Call, resource_type: int, configs: dict[str, str], c: IncrementalIn) -> None:
    config = table(resource_type, release_of(call.state.release_name)).get(c.name)
    if c.config_operation == SET:
        _check(call, resource_type, c.name, c.value)
        if c.value is None:
            raise Refused(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {c.name}")
        configs[c.name] = c.value
    elif c.config_operation == DELETE:
        configs.pop(c.name, None)
    elif c.config_operation in (APPEND, SUBTRACT):
        _check(call, resource_type, c.name, c.value)
        if config is None or config.type != LIST:
            verb = "append" if c.config_operation == APPEND else "subtract"
            raise Refused(
                ErrorCode.INVALID_CONFIG,
                f"Config value {verb} is not allowed for config key: {c.name}",
            )
        current = configs.get(c.name, config.default or "")
        items = [i for i in current.split(",") if i]
        for item in (c.value or "").split(","):
            if c.config_operation == APPEND and item not in items:
                items.append(item)
            elif c.config_operation == SUBTRACT and item in items:
                items.remove(item)
        configs[c.name] = ",".join(items)
    else:
        raise Refused(ErrorCode.INVALID_REQUEST, f"Unknown operation {c.config_operation}")


def _target(call: Call, resource_type: int, name: str) -> dict[str, str]:
    state = call.state
    if resource_type == TOPIC:
        topic = state.topics.get(name)
        if topic is None:
            raise Refused(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {name} does not exist.")
        return topic.configs
    if resource_type == BROKER:
        if name not in ("", str(call.node.node_id)):
            raise Refused(
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {call.node.node_id} or empty string, but "
                f"received {name}",
            )
        return state.configs.setdefault((BROKER, name), {})
    if resource_type in (GROUP, CLIENT_METRICS):
        if not name:
            raise Refused(ErrorCode.INVALID_REQUEST, "Resource name can't be empty.")
        return state.configs.setdefault((resource_type, name), {})
    raise Refused(ErrorCode.INVALID_REQUEST, f"Unsupported resource type {resource_type}")


def _check(call: Call, resource_type: int, name: str, value: str | None) -> None:
    if resource_type == CLIENT_METRICS:
        return
    release = release_of(call.state.release_name)
    config = table(resource_type, release).get(name)
    kind = {TOPIC: "topic", BROKER: "broker", GROUP: "group"}[resource_type]
    if config is None:
        raise Refused(ErrorCode.INVALID_CONFIG, f"Unknown {kind} config name: {name}")
    if resource_type == BROKER and not _dynamic(name, release):
        raise Refused(
            ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: [{name}]"
        )
    problem = validate(config, value)
    if problem is not None:
        raise Refused(ErrorCode.INVALID_CONFIG, problem)


def _alter_response(call: Call, answers: list[tuple[Any, ErrorCode, str | None]]) -> Any:
    item = call.item(call.response, "responses")
    return call.respond(
        responses=[
            call.build(
                item,
                error_code=code,
                error_message=message,
                resource_type=r.resource_type,
                resource_name=r.resource_name,
            )
            for r, code, message in answers
        ]
    )


# --- ListConfigResources --------------------------------------------------------------------


class ListConfigResourcesIn(Protocol):
    resource_types: Sequence[int]


def list_config_resources(call: Call) -> Any:
    req: ListConfigResourcesIn = call.read(ListConfigResourcesIn)
    item = call.item(call.response, "config_resources")
    state = call.state
    asked = list(req.resource_types) if call.version >= 1 else [CLIENT_METRICS]
    unknown = [t for t in asked if t not in LISTED_TYPES]
    if unknown:
        return call.respond(error_code=ErrorCode.UNSUPPORTED_VERSION, config_resources=[])
    found: list[tuple[int, str]] = []
    for kind in asked or LISTED_TYPES:
        if kind == TOPIC:
            found += [(TOPIC, name) for name in state.topics]
        elif kind == BROKER:
            found += [(BROKER, str(b.node_id)) for b in state.brokers]
        elif kind == GROUP:
            names = set(state.groups) | {n for (t, n) in state.configs if t == GROUP}
            found += [(GROUP, name) for name in names]
        else:
            found += [(t, n) for (t, n) in state.configs if t == kind]
    return call.respond(
        error_code=ErrorCode.NONE,
        config_resources=[
            call.build(item, resource_name=name, resource_type=kind) for kind, name in sorted(found)
        ],
    )


HANDLERS = (
    Handler(ApiKey.DESCRIBE_CONFIGS, (0, 4), describe_configs, DESCRIBE_NAMES, DescribeConfigsIn),
    Handler(ApiKey.ALTER_CONFIGS, (0, 2), alter_configs, DESCRIBE_NAMES, AlterConfigsIn),
    Handler(
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
        (0, 1),
        incremental_alter_configs,
        DESCRIBE_NAMES,
        IncrementalAlterConfigsIn,
    ),
    Handler(
        ApiKey.LIST_CONFIG_RESOURCES,
        (0, 1),
        list_config_resources,
        LIST_NAMES,
        ListConfigResourcesIn,
    ),
)
