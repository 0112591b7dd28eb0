"""ACLs and the authorizer, as Kafka's ``StandardAuthorizer``/``AclAuthorizer`` decide.

An ACL (``AclBinding``) allows or denies a principal (``User:alice``, or ``User:*``) from a
host (an IP address, or ``*``) an operation on resources: a LITERAL name (or ``*``, every
resource of the type) or a PREFIXED one. A request is allowed when:

- the principal is a super user; else
- no ACL that matches it denies the operation (or ALL), and one allows it, ALL, or an
  operation that implies it (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS
  implies DESCRIBE_CONFIGS); with no ACL on the resource at all, the request is denied
  (``allow.everyone.if.no.acl.found`` is false by default).

Filters (``AclFilter``: DescribeAcls, DeleteAcls) match as Kafka's ``AclBindingFilter``:
ANY for any value, a null name/principal/host for any, and the pattern type MATCH for every
ACL that would apply to the named resource (the literal name, ``*``, and the prefixes).
The numbers are Kafka's (``ResourceType``, ``PatternType``, ``AclOperation``,
``AclPermissionType``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"
#: What allows an operation besides itself and ALL (apache/kafka ``AclEntry``)
IMPLIED_BY = {
    Operation.DESCRIBE: (Operation.READ, Operation.WRITE, Operation.DELETE, Operation.ALTER),
    Operation.DESCRIBE_CONFIGS: (Operation.ALTER_CONFIGS,),
}
#: The operations each resource type has (for the ``*_authorized_operations`` fields)
SUPPORTED = {
    ResourceType.TOPIC: (
        Operation.READ,
        Operation.WRITE,
        Operation.CREATE,
        Operation.DESCRIBE,
        Operation.DELETE,
        Operation.ALTER,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        Operation.READ,
        Operation.DESCRIBE,
        Operation.DELETE,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        Operation.CREATE,
        Operation.CLUSTER_ACTION,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
        Operation.IDEMPOTENT_WRITE,
        Operation.ALTER,
        Operation.DESCRIBE,
    ),
}


@dataclass(frozen=True)
class AclBinding:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: Operation
    permission: Permission

    def applies_to(self, resource_type: int, name: str) -> bool:
        if self.resource_type != resource_type:
            return False
        if self.pattern_type == PatternType.LITERAL:
            return self.name in (name, WILDCARD)
        return name.startswith(self.name)


@dataclass(frozen=True)
class AclFilter:
    """A filter of DescribeAcls and DeleteAcls (None: any name, principal or host)."""

    resource_type: int
    name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission: int

    def invalid(self) -> str | None:
        """Why Kafka refuses the filter, or None."""
        for value, kind in (
            (self.resource_type, "resource type"),
            (self.pattern_type, "pattern type"),
            (self.operation, "operation"),
            (self.permission, "permission type"),
        ):
            if value == 0:
                return f"The {kind} filter is UNKNOWN."
        if not _known(self):
            return "The filter has a value Kafka does not know."
        return None

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != acl.resource_type:
            return False
        pattern = self.pattern_type
        if pattern not in (PatternType.ANY, PatternType.MATCH) and pattern != acl.pattern_type:
            return False
        if self.name is not None:
            if pattern in (PatternType.ANY, acl.pattern_type):
                if self.name != acl.name:
                    return False
            elif acl.pattern_type == PatternType.LITERAL:
                if acl.name not in (self.name, WILDCARD):
                    return False
            elif not self.name.startswith(acl.name):
                return False
        return (
            (self.principal is None or self.principal == acl.principal)
            and (self.host is None or self.host == acl.host)
            and self.operation in (Operation.ANY, acl.operation)
            and self.permission in (Permission.ANY, acl.permission)
        )


def invalid_binding(acl: AclBinding) -> str | None:
    """Why Kafka refuses to create ``acl`` (INVALID_REQUEST), or None (apache/kafka
    ``AclControlManager.validateNewAcl``, ``AclApis``)."""
    if not _known(acl):
        return "The ACL has a value Kafka does not know."
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {acl.resource_type.name}"
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {acl.pattern_type.name}"
    if acl.operation in (Operation.UNKNOWN, Operation.ANY):
        return f"Invalid operation {acl.operation.name}"
    if acl.permission not in (Permission.DENY, Permission.ALLOW):
        return f"Invalid permissionType {acl.permission.name}"
    if not acl.name:
        return "Resource name should not be empty"
    if acl.resource_type == ResourceType.CLUSTER and acl.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    kind, sep, name = acl.principal.partition(":")
    if not sep or not kind or not name:
        return (
            f"Could not parse principal from `{acl.principal}` (no colon is present "
            "separating the principal type from the principal name)"
        )
    return None


def _known(acl: AclBinding | AclFilter) -> bool:
    return (
        acl.resource_type in ResourceType._value2member_map_
        and acl.pattern_type in PatternType._value2member_map_
        and acl.operation in Operation._value2member_map_
        and acl.permission in Permission._value2member_map_
    )


def binding(
    resource_type: int,
    name: str,
    pattern_type: int,
    principal: str,
    host: str,
    operation: int,
    permission: int,
) -> AclBinding:
    """An ``AclBinding`` from wire numbers (unknown numbers kept as they are)."""

    def enum(kind: type[IntEnum], value: int) -> IntEnum:
        return kind(value) if value in kind._value2member_map_ else kind(0)

    return AclBinding(
        enum(ResourceType, resource_type),  # type: ignore[arg-type]
        name,
        enum(PatternType, pattern_type),  # type: ignore[arg-type]
        principal,
        host,
        enum(Operation, operation),  # type: ignore[arg-type]
        enum(Permission, permission),  # type: ignore[arg-type]
    )


def user(name: str) -> str:
    """``alice`` -> ``User:alice`` (a name with a type already is kept)."""
    return name if ":" in name else f"User:{name}"


class Authorizer:
    """The cluster's ACLs and super users; ``authorize`` decides one operation."""

    def __init__(self, superusers: Iterable[str] = (), allow_if_no_acl: bool = False) -> None:
        self.superusers = {user(name) for name in superusers}
        self.allow_if_no_acl = allow_if_no_acl
        self.acls: dict[AclBinding, None] = {}
        """Every ACL, in the order created (a dict as an ordered set)."""

    def authorize(
        self, principal: str, host: str, operation: int, resource_type: int, name: str
    ) -> bool:
        if principal in self.superusers:
            return True
        allowing = (operation, Operation.ALL, *IMPLIED_BY.get(Operation(operation), ()))
        allowed = False
        any_acl = False
        for acl in self.acls:
            if not acl.applies_to(resource_type, name):
                continue
            any_acl = True
            if acl.principal not in (principal, "User:*") or acl.host not in (host, WILDCARD):
                continue
            if acl.permission == Permission.DENY and acl.operation in (operation, Operation.ALL):
                return False
            if acl.permission == Permission.ALLOW and acl.operation in allowing:
                allowed = True
        return allowed or (not any_acl and self.allow_if_no_acl)

    def authorized_operations(
        self, principal: str, host: str, resource_type: ResourceType, name: str
    ) -> int:
        """The bit field of the ``*_authorized_operations`` fields (bit n: operation n)."""
        bits = 0
        for operation in SUPPORTED.get(resource_type, ()):
            if self.authorize(principal, host, operation, resource_type, name):
                bits |= 1 << operation
        return bits

    def allows_any(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """Whether some resource of the type may take the operation (Kafka's
        ``authorizeByResourceType``, KIP-679: an idempotent producer needs WRITE on some
        topic): an ALLOW for the principal and host that no DENY of every resource of the
        type (``*`` or the empty prefix) cancels."""
        if principal in self.superusers:
            return True
        allowed = False
        for acl in self.acls:
            if acl.resource_type != resource_type:
                continue
            if acl.principal not in (principal, "User:*") or acl.host not in (host, WILDCARD):
                continue
            if acl.operation not in (operation, Operation.ALL):
                continue
            if acl.permission == Permission.DENY and (
                (acl.pattern_type == PatternType.LITERAL and acl.name == WILDCARD)
                or (acl.pattern_type == PatternType.PREFIXED and acl.name == "")
            ):
                return False
            if acl.permission == Permission.ALLOW:
                allowed = True
        return allowed
