"""CreateAcls, DescribeAcls and DeleteAcls (the rules are ``acl``'s).

Without an authorizer (no super user given), Kafka answers them with SECURITY_DISABLED;
with one, they need ALTER (create, delete) or DESCRIBE (describe) on the cluster, else
CLUSTER_AUTHORIZATION_FAILED (apache/kafka ``AclApis``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from .acl import CLUSTER_NAME, AclBinding, AclFilter, Authorizer, Operation, ResourceType
from .acl import binding, invalid_binding
from ..api_keys import ApiKey
from .call import Call
from .errors import ErrorCode
from .handler import Handler
from .shapes import Names

NO_AUTHORIZER = "No Authorizer is configured on the broker"
NAMES = Names(
    # DescribeAcls until Kafka 2.4 (v0-v1)
    renamed={
        "resource_type_filter": ("resource_type",),
        "pattern_type_filter": ("resource_pattern_type",),
        "resource_type": ("type",),
        "resource_name": ("name",),
    },
)


class CreationIn(Protocol):
    resource_type: int
    resource_name: str
    resource_pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


class CreateAclsIn(Protocol):
    creations: Sequence[CreationIn]


class FilterIn(Protocol):
    resource_type_filter: int
    resource_name_filter: str | None
    pattern_type_filter: int
    principal_filter: str | None
    host_filter: str | None
    operation: int
    permission_type: int


class DeleteAclsIn(Protocol):
    filters: Sequence[FilterIn]


def _denied(call: Call, operation: Operation) -> ErrorCode | None:
    """SECURITY_DISABLED without an authorizer, CLUSTER_AUTHORIZATION_FAILED without the
    right on the cluster, else None."""
    authorizer = call.state.authorizer
    if authorizer is None:
        return ErrorCode.SECURITY_DISABLED
    if not authorizer.authorize(
        call.principal, call.client_host, operation, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None


def _message(code: ErrorCode) -> str | None:
    return NO_AUTHORIZER if code == ErrorCode.SECURITY_DISABLED else None


def create_acls(call: Call) -> Any:
    req: CreateAclsIn = call.read(CreateAclsIn)
    result_class = call.item(call.response, "results")
    denied = _denied(call, Operation.ALTER)
    results = []
    for c in req.creations:
        if denied is not None:
            code, message = denied, _message(denied)
        else:
            acl = binding(
                c.resource_type,
                c.resource_name,
                c.resource_pattern_type,
                c.principal,
                c.host,
                c.operation,
                c.permission_type,
            )
            message = invalid_binding(acl)
            code = ErrorCode.INVALID_REQUEST if message else ErrorCode.NONE
            if message is None:
                _authorizer(call).acls[acl] = None
        results.append(call.build(result_class, error_code=code, error_message=message))
    return call.respond(results=results)


def _filter(f: FilterIn) -> AclFilter:
    return AclFilter(
        f.resource_type_filter,
        f.resource_name_filter,
        f.pattern_type_filter,
        f.principal_filter,
        f.host_filter,
        f.operation,
        f.permission_type,
    )


def describe_acls(call: Call) -> Any:
    wanted = _filter(call.read(FilterIn))
    denied = _denied(call, Operation.DESCRIBE)
    if denied is not None:
        return call.respond(error_code=denied, error_message=_message(denied), resources=[])
    invalid = wanted.invalid()
    if invalid is not None:
        return call.respond(error_code=ErrorCode.INVALID_REQUEST, error_message=invalid)
    resource_class = call.item(call.response, "resources")
    acl_class = call.item(resource_class, "acls")
    by_resource: dict[tuple[int, str, int], list[AclBinding]] = {}
    for acl in _authorizer(call).acls:
        if wanted.matches(acl):
            key = (acl.resource_type, acl.name, acl.pattern_type)
            by_resource.setdefault(key, []).append(acl)
    resources = [
        call.build(
            resource_class,
            resource_type=resource_type,
            resource_name=name,
            pattern_type=pattern_type,
            acls=[
                call.build(
                    acl_class,
                    principal=a.principal,
                    host=a.host,
                    operation=a.operation,
                    permission_type=a.permission,
                )
                for a in acls
            ],
        )
        for (resource_type, name, pattern_type), acls in by_resource.items()
    ]
    return call.respond(error_code=ErrorCode.NONE, error_message=None, resources=resources)


def delete_acls(call: Call) -> Any:
    req: DeleteAclsIn = call.read(DeleteAclsIn)
    result_class = call.item(call.response, "filter_results")
    matching_class = call.item(result_class, "matching_acls")
    denied = _denied(call, Operation.ALTER)
    results = []
    for f in req.filters:
        wanted = _filter(f)
        invalid = wanted.invalid() if denied is None else None
        if denied is not None or invalid is not None:
            code = denied if denied is not None else ErrorCode.INVALID_REQUEST
            message = invalid if invalid is not None else _message(code)
            results.append(call.build(result_class, error_code=code, error_message=message))
            continue
        acls = _authorizer(call).acls
        deleted = [acl for acl in acls if wanted.matches(acl)]
        for acl in deleted:
            del acls[acl]
        results.append(
            call.build(
                result_class,
                error_code=ErrorCode.NONE,
                error_message=None,
                matching_acls=[
                    call.build(
                        matching_class,
                        error_code=ErrorCode.NONE,
                        error_message=None,
                        resource_type=a.resource_type,
                        resource_name=a.name,
                        pattern_type=a.pattern_type,
                        principal=a.principal,
                        host=a.host,
                        operation=a.operation,
                        permission_type=a.permission,
                    )
                    for a in deleted
                ],
            )
        )
    return call.respond(filter_results=results)


def _authorizer(call: Call) -> Authorizer:
    authorizer = call.state.authorizer
    assert authorizer is not None  # _denied said so
    return authorizer


HANDLERS = (
    Handler(ApiKey.CREATE_ACLS, (0, 3), create_acls, NAMES, CreateAclsIn),
    Handler(ApiKey.DESCRIBE_ACLS, (0, 3), describe_acls, NAMES, FilterIn),
    Handler(ApiKey.DELETE_ACLS, (0, 3), delete_acls, NAMES, DeleteAclsIn),
)
