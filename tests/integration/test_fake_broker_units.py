"""The fake broker's group and share machinery without sockets: the server-side assignors,
KIP-848 reconciliation (revocation before assignment), the RE2-syntax topic regexes and
the share-partition state machine."""

from __future__ import annotations

import time
import uuid

import pytest

from kafka_specgen.fake_broker.assignors import range_, simple, uniform
from kafka_specgen.fake_broker.modern import (
    STABLE,
    UNRELEASED,
    UNREVOKED,
    ModernGroup,
    ModernMember,
    reconcile,
)
from kafka_specgen.fake_broker.share_state import (
    ACCEPT,
    ACKNOWLEDGED,
    ARCHIVED,
    AVAILABLE,
    REJECT,
    RELEASE,
    SharePartition,
    ranges,
)
from kafka_specgen.fake_broker.topic_regex import RegexError, compile_regex

T1, T2 = uuid.UUID(int=1), uuid.UUID(int=2)


def owned(assignment: dict[str, dict[uuid.UUID, set[int]]]) -> dict[tuple[uuid.UUID, int], str]:
    out: dict[tuple[uuid.UUID, int], str] = {}
    for member, partitions in assignment.items():
        for topic_id, indexes in partitions.items():
            for index in indexes:
                assert (topic_id, index) not in out, "a partition given twice"
                out[(topic_id, index)] = member
    return out


# --- assignors ------------------------------------------------------------------------------


def test_uniform_balances_and_keeps_what_it_can() -> None:
    subs = {"a": ("t",), "b": ("t",), "c": ("t",)}
    first = uniform({"a": ("t",)}, {"t": (T1, 7)}, {})
    assert owned(first) == {(T1, i): "a" for i in range(7)}
    second = uniform(subs, {"t": (T1, 7)}, first)
    loads = sorted(len(p.get(T1, ())) for p in second.values())
    assert loads == [2, 2, 3]
    # sticky: "a" keeps partitions it had rather than getting new ones
    assert second["a"][T1] <= first["a"][T1]
    assert len(owned(second)) == 7
    # a member leaves: the others keep theirs and share its partitions
    third = uniform({"a": ("t",), "b": ("t",)}, {"t": (T1, 7)}, second)
    assert second["a"][T1] <= third["a"][T1] and second["b"][T1] <= third["b"][T1]
    assert sorted(len(p[T1]) for p in third.values()) == [3, 4]


def test_uniform_with_different_subscriptions() -> None:
    subs = {"a": ("t1",), "b": ("t1", "t2"), "c": ("t2",)}
    result = uniform(subs, {"t1": (T1, 4), "t2": (T2, 2)}, {})
    assert len(owned(result)) == 6
    assert T2 not in result["a"] and T1 not in result["c"]
    assert sorted(sum(len(p) for p in parts.values()) for parts in result.values()) == [2, 2, 2]


def test_range_co_partitions() -> None:
    subs = {"m1": ("a", "b"), "m2": ("a", "b")}
    result = range_(subs, {"a": (T1, 3), "b": (T2, 3)}, {})
    assert result["m1"] == {T1: {0, 1}, T2: {0, 1}}
    assert result["m2"] == {T1: {2}, T2: {2}}


def test_simple_share_assignor_shares_partitions_when_members_outnumber_them() -> None:
    result = simple({"x": ("t",), "y": ("t",), "z": ("t",)}, {"t": (T1, 2)}, {})
    assert [result[m][T1] for m in "xyz"] == [{0}, {1}, {0}]
    fewer = simple({"x": ("t",)}, {"t": (T1, 2)}, {})
    assert fewer["x"][T1] == {0, 1}


# --- reconciliation -------------------------------------------------------------------------


def test_revocation_before_assignment() -> None:
    """apache/kafka CurrentAssignmentBuilder: B gets A's partition only once A let it go."""
    group = ModernGroup("consumer", group_epoch=2, assignment_epoch=2)
    a = ModernMember("a", member_epoch=1, assigned={T1: {0, 1}})
    b = ModernMember("b", member_epoch=0)
    group.members = {"a": a, "b": b}
    group.own(a)
    target = {"a": {T1: {0}}, "b": {T1: {1}}}
    # B first: partition 1 is still A's
    group.release(b)
    reconcile(b, 2, target["b"], group.owner_epoch, [])
    group.own(b)
    assert (b.state, b.member_epoch, b.assigned) == (UNRELEASED, 2, {})
    # A is asked to revoke 1 and stays at epoch 1
    group.release(a)
    reconcile(a, 2, target["a"], group.owner_epoch, [(T1, [0, 1])])
    group.own(a)
    assert (a.state, a.member_epoch, a.assigned, a.pending_revocation) == (
        UNREVOKED,
        1,
        {T1: {0}},
        {T1: {1}},
    )
    assert group.owner_epoch(T1, 1) == 1  # still A's
    # A says it no longer owns 1: it moves to epoch 2
    group.release(a)
    reconcile(a, 2, target["a"], group.owner_epoch, [(T1, [0])])
    group.own(a)
    assert (a.state, a.member_epoch, a.pending_revocation) == (STABLE, 2, {})
    assert group.state() == "Reconciling"  # B still waits
    assert group.owner_epoch(T1, 1) == -1
    # now B gets it
    group.release(b)
    reconcile(b, 2, target["b"], group.owner_epoch, [])
    group.own(b)
    assert (b.state, b.assigned) == (STABLE, {T1: {1}})
    assert group.state() == "Stable"


def test_a_member_that_does_not_say_what_it_owns_keeps_revoking() -> None:
    group = ModernGroup("consumer")
    a = ModernMember("a", member_epoch=3, assigned={T1: {0, 1}})
    reconcile(a, 4, {T1: {0}}, group.owner_epoch, None)
    assert a.state == UNREVOKED
    reconcile(a, 4, {T1: {0}}, group.owner_epoch, None)
    assert (a.state, a.member_epoch) == (UNREVOKED, 3)


# --- topic regexes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("orders-.*", "orders-eu", True),
        ("orders-.*", "old-orders-eu", False),  # the whole name, as Java's matches()
        ("orders|payments", "payments", True),
        ("t[0-9]{2}", "t07", True),
        ("t[0-9]{2}", "t007", False),
        ("(?i)ORDERS", "orders", True),
        ("[[:alpha:]]+-\\d+", "abc-12", True),
        ("[^.]+", "a.b", False),
        ("\\Qa.b\\E", "a.b", True),
        ("\\Qa.b\\E", "axb", False),
        ("(?P<name>ab)+c?", "abab", True),
        ("(a|a)*b", "a" * 240 + "c", False),  # exponential for a backtracking engine
        ("(x+x+)+y", "x" * 240, False),
    ],
)
def test_topic_regex(pattern: str, name: str, matches: bool) -> None:
    assert compile_regex(pattern).matches(name) is matches


@pytest.mark.parametrize(
    "pattern", ["(a", "a)", "\\1", "(?=a)", "(?<!a)b", "a++", "a**", "\\pL", "[z-a]", "a{1001}"]
)
def test_patterns_re2_refuses(pattern: str) -> None:
    with pytest.raises(RegexError):
        compile_regex(pattern)


def test_a_hostile_regex_is_matched_in_linear_time() -> None:
    """The coordinator runs on the cluster's one loop: a pattern must not stall it."""
    regex = compile_regex("(a|aa|a?)*(a*)*b")
    started = time.perf_counter()
    assert not regex.matches("a" * 249)
    assert time.perf_counter() - started < 5.0


# --- share partitions -----------------------------------------------------------------------


def test_share_partition_acquire_acknowledge_and_advance() -> None:
    share = SharePartition(start=10)
    for offset in range(10, 14):
        assert share.acquirable(offset, limit=100)
        assert share.acquire(offset, "m1", deadline=100.0) == 1
    assert not share.acquirable(10, limit=100)
    assert not share.acknowledge(10, 11, ACCEPT, "m2", 5, 0.0)  # not m2's
    assert share.acknowledge(10, 11, ACCEPT, "m1", 5, 0.0)
    assert share.start == 12
    assert share.acknowledge(13, 13, REJECT, "m1", 5, 0.0)
    assert share.state_of(13) == ARCHIVED and share.start == 12
    assert share.acknowledge(12, 12, RELEASE, "m1", 5, 0.0)
    assert share.state_of(12) == AVAILABLE and share.acquirable(12, 100)
    assert share.acquire(12, "m2", 100.0) == 2  # delivered a second time
    assert share.acknowledge(12, 12, ACCEPT, "m2", 5, 0.0)
    assert share.start == 14 and share.records == {}
    assert share.state_of(20) == AVAILABLE
    assert ACKNOWLEDGED  # the names are Kafka's


def test_share_partition_locks_expire_and_the_delivery_limit_archives() -> None:
    share = SharePartition(start=0)
    for attempt in range(1, 3):
        share.acquire(0, "m", deadline=float(attempt))
        assert share.next_deadline() == float(attempt)
        share.expire(now=float(attempt), limit=2)
    assert share.start == 1 and not share.acquirable(0, limit=100)  # archived, then done
    share.acquire(1, "m", deadline=5.0)
    share.acquire(2, "other", deadline=5.0)
    share.release_member("m", limit=5)
    assert share.state_of(1) == AVAILABLE and share.state_of(2) == "ACQUIRED"
    assert share.acquirable(1, limit=1) and not share.acquirable(2, limit=10)
    assert not share.acquirable(3, limit=2)  # beyond start + max record locks


def test_acquired_ranges() -> None:
    acquired = [(5, 1), (6, 1), (7, 2), (9, 2), (10, 2)]
    assert list(ranges(acquired)) == [(5, 6, 1), (7, 7, 2), (9, 10, 2)]
