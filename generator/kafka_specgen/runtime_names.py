"""The names the runtime spells, and the enum members every package holds for them.

The runtime (``templates/runtime``) names api keys and error codes, never numbers:
``ApiKey.API_VERSIONS``, ``ErrorCode.UNSUPPORTED_VERSION``. A package's ``registry.ApiKey``
has a member per name of its ``API_NAMES`` and ``error_codes.ErrorCode`` one per code of its
facts table; both also get every member the runtime spells that they lack, with Kafka's
number (and flags) from the tool's own facts tables. So the runtime works in every package:
one generated from part of a spec set (``--apis``, ``--listeners``) or without facts
(``--facts none``).
"""

from __future__ import annotations

import ast
from functools import cache

from .errors import SpecError
from .facts import ErrorCodeFact, Facts, build_facts
from .load import load_paths
from .model import snake_case
from .resources import package_folder

RUNTIME = package_folder("templates") / "runtime"
#: The package enums whose members the runtime spells.
RUNTIME_ENUMS = ("ApiKey", "ErrorCode")


@cache
def runtime_members() -> dict[str, frozenset[str]]:
    """Enum name -> the members the runtime's sources spell (``ApiKey.X``, read with
    ``ast``: every module, whether or not a package copies it)."""
    found: dict[str, set[str]] = {name: set() for name in RUNTIME_ENUMS}
    for path in sorted(RUNTIME.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in found
                and node.attr.isupper()
            ):
                found[node.value.id].add(node.attr)
    return {name: frozenset(members) for name, members in found.items()}


@cache
def tool_facts() -> Facts:
    """The tool's own api-key and error-code tables (``specs/facts``)."""
    folder = package_folder("specs") / "facts"
    return build_facts(load_paths([folder / "api-keys.json", folder / "error-codes.json"]))


def member_name(api_name: str) -> str:
    """An API's ``ApiKey`` member: Kafka's upper snake case (``ApiVersions`` ->
    ``API_VERSIONS``, as apache/kafka ``ApiKeys.java`` spells it)."""
    return snake_case(api_name).upper()


def api_key_members(api_names: dict[int, str], source: str) -> tuple[tuple[str, int], ...]:
    """``(member, key)`` of a package's ``ApiKey``, by key: one per name of ``api_names``,
    and each key the runtime spells under Kafka's name (an alias where the package names
    that key otherwise). A name given to two keys is a ``SpecError`` (``source``: where
    the names come from)."""
    members = {member_name(name): key for key, name in api_names.items()}
    if len(members) < len(api_names):
        _clash(api_names, source)
    kafka = {member_name(fact.name): fact.key for fact in tool_facts().api_keys}
    for name in sorted(runtime_members()["ApiKey"]):
        key = members.setdefault(name, kafka[name])
        if key != kafka[name]:
            raise SpecError(
                source,
                "api-key-name",
                f"api key {key} is named {name}, Kafka's name of api key {kafka[name]}, "
                "which the runtime uses",
            )
    return tuple(sorted(members.items(), key=lambda item: (item[1], item[0])))


def error_codes(facts: Facts) -> tuple[ErrorCodeFact, ...]:
    """A package's error codes, by code: its facts table's, and each code the runtime
    spells that the table lacks (Kafka's, from the tool's table)."""
    codes = {fact.name: fact for fact in facts.error_codes}
    kafka = {fact.name: fact for fact in tool_facts().error_codes}
    for name in sorted(runtime_members()["ErrorCode"]):
        fact = codes.setdefault(name, kafka[name])
        if fact.code != kafka[name].code:
            raise SpecError(
                facts.error_codes_source or "error codes",
                "error-code-name",
                f"error code {fact.code} is named {name}, Kafka's name of error code "
                f"{kafka[name].code}, which the runtime uses",
            )
    return tuple(sorted(codes.values(), key=lambda fact: fact.code))


def _clash(api_names: dict[int, str], source: str) -> None:
    keys: dict[str, int] = {}
    for key, name in sorted(api_names.items()):
        other = keys.setdefault(member_name(name), key)
        if other != key:
            raise SpecError(
                source,
                "api-key-name",
                f"api keys {other} ({api_names[other]}) and {key} ({name}) would both be "
                f"ApiKey.{member_name(name)}",
            )
