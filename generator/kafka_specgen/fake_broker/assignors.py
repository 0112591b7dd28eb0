"""The group coordinator's server-side assignors: ``uniform`` (the default) and ``range`` for
consumer groups (KIP-848), ``simple`` for share groups (KIP-932).

Each takes the members' subscriptions (member id -> topic names), the subscribed topics
that exist (name -> (topic id, partition count)) and the previous target assignment, and
returns the new target (member id -> topic id -> partitions). They follow what apache/kafka
``UniformAssignor``, ``RangeAssignor`` and ``SimpleAssignor`` promise (balance, stickiness,
co-partitioning for range) without reproducing their exact choice of partitions.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

from .modern import Partitions

Topics = Mapping[str, tuple[uuid.UUID, int]]
Assignor = Callable[
    [Mapping[str, tuple[str, ...]], Topics, Mapping[str, Partitions]], dict[str, Partitions]
]
TopicPartition = tuple[uuid.UUID, int]


def uniform(
    subscriptions: Mapping[str, tuple[str, ...]],
    topics: Topics,
    previous: Mapping[str, Partitions],
) -> dict[str, Partitions]:
    """Every partition to one subscribed member; member loads differ by at most one where
    subscriptions allow; a partition stays with its previous owner while that keeps the
    balance (sticky)."""
    eligible: dict[TopicPartition, list[str]] = {}
    for name in sorted(topics):
        topic_id, count = topics[name]
        members = sorted(m for m, subscribed in subscriptions.items() if name in subscribed)
        if members:
            for index in range(count):
                eligible[(topic_id, index)] = members
    owner: dict[TopicPartition, str] = {}
    load = {member: 0 for member in subscriptions}
    for member in sorted(previous):
        if member not in subscriptions:
            continue
        for topic_id, indexes in sorted(previous[member].items()):
            for index in sorted(indexes):
                tp = (topic_id, index)
                if tp in eligible and tp not in owner and member in eligible[tp]:
                    owner[tp] = member
                    load[member] += 1
    if len({frozenset(topics) for topics in subscriptions.values()}) == 1:
        _trim(owner, load, len(eligible))
    for tp, members in eligible.items():
        if tp not in owner:
            chosen = min(members, key=lambda m: (load[m], m))
            owner[tp] = chosen
            load[chosen] += 1
    _balance(owner, load, eligible)
    return _by_member(owner, subscriptions)


def _trim(owner: dict[TopicPartition, str], load: dict[str, int], partitions: int) -> None:
    """Every member subscribes to the same topics: take back the kept partitions above a
    member's fair share (partitions // members, one more for as many members as the
    remainder, those that keep most first)."""
    base, extra = divmod(partitions, len(load))
    by_load = sorted(load, key=lambda m: (-load[m], m))
    quota = {m: base + (1 if n < extra else 0) for n, m in enumerate(by_load)}
    for tp in sorted(owner, reverse=True):
        member = owner[tp]
        if load[member] > quota[member]:
            del owner[tp]
            load[member] -= 1


def _balance(
    owner: dict[TopicPartition, str],
    load: dict[str, int],
    eligible: Mapping[TopicPartition, list[str]],
) -> None:
    """Move partitions from a member to an eligible one with at least two fewer, until none
    can move (each move lowers the sum of squared loads, so this ends)."""
    moved = True
    while moved:
        moved = False
        for tp in sorted(owner):
            current = owner[tp]
            target = min(eligible[tp], key=lambda m: (load[m], m))
            if load[target] + 1 < load[current]:
                owner[tp] = target
                load[current] -= 1
                load[target] += 1
                moved = True


def range_(
    subscriptions: Mapping[str, tuple[str, ...]],
    topics: Topics,
    previous: Mapping[str, Partitions],
) -> dict[str, Partitions]:
    """Per topic, its subscribed members (by member id) get consecutive ranges of
    partitions, the first ones one more when they do not divide evenly: members subscribed
    to the same topics get the same partition numbers of each (co-partitioning)."""
    owner: dict[TopicPartition, str] = {}
    for name in sorted(topics):
        topic_id, count = topics[name]
        members = sorted(m for m, subscribed in subscriptions.items() if name in subscribed)
        if not members:
            continue
        base, extra = divmod(count, len(members))
        start = 0
        for n, member in enumerate(members):
            size = base + (1 if n < extra else 0)
            for index in range(start, start + size):
                owner[(topic_id, index)] = member
            start += size
    return _by_member(owner, subscriptions)


def simple(
    subscriptions: Mapping[str, tuple[str, ...]],
    topics: Topics,
    previous: Mapping[str, Partitions],
) -> dict[str, Partitions]:
    """Share groups: each partition to one or more subscribed members (records are shared
    record by record, so members may share a partition): with fewer members than
    partitions they split the partitions, with more every partition is given to several."""
    result: dict[str, Partitions] = {member: {} for member in subscriptions}
    for name in sorted(topics):
        topic_id, count = topics[name]
        members = sorted(m for m, subscribed in subscriptions.items() if name in subscribed)
        if not members or not count:
            continue
        for n in range(max(count, len(members))):
            member = members[n % len(members)]
            result[member].setdefault(topic_id, set()).add(n % count)
    return result


def _by_member(
    owner: Mapping[TopicPartition, str], subscriptions: Mapping[str, tuple[str, ...]]
) -> dict[str, Partitions]:
    result: dict[str, Partitions] = {member: {} for member in subscriptions}
    for (topic_id, index), member in owner.items():
        result[member].setdefault(topic_id, set()).add(index)
    return result


#: The consumer group assignors by the names ConsumerGroupHeartbeat's ServerAssignor uses
#: (group.consumer.assignors: uniform first, the default).
CONSUMER_ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_}
DEFAULT_CONSUMER_ASSIGNOR = "uniform"
SHARE_ASSIGNOR = "simple"
