# kafka-specgen 0.2.0 runtime, copied verbatim into package kafka_messages — do not edit
"""Helpers for a client of a whole cluster, and for Kafka 4.1+.

- ``ClusterMetadata``: a Metadata response as lookups: topic name <-> id (Produce v13 and
  Fetch v13+ name topics by id), partition leaders, broker addresses.
- ``fetched_records(fetch_response, names)``: the records of each partition of a Fetch
  answer; ``partition_errors(response, names)``: every error code with its topic,
  partition and ``ErrorCode``.
- ``Cluster`` (blocking) and ``AsyncCluster`` (asyncio): bootstrap, one connection per
  node, ``produce``/``fetch`` routed to partition leaders, ``group_request`` to group
  coordinators, the metadata refreshed on NOT_LEADER_OR_FOLLOWER and NOT_COORDINATOR.

Optional: everything here is built on ``client``, ``aio`` and the message classes; the
routing itself (``_plans``) does no I/O and is shared by both.
"""

from __future__ import annotations

from ._aio import AsyncCluster
from ._blocking import Cluster
from ._metadata import BrokerInfo, ClusterMetadata, TopicInfo
from ._plans import Build
from ._responses import FetchedPartition, PartitionError, fetched_records, partition_errors

__all__ = [
    "AsyncCluster",
    "BrokerInfo",
    "Build",
    "Cluster",
    "ClusterMetadata",
    "FetchedPartition",
    "PartitionError",
    "TopicInfo",
    "fetched_records",
    "partition_errors",
]
