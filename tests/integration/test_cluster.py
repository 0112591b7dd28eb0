"""``cluster``: routing to leaders and coordinators, refreshed when they move, against a fake
3-broker cluster; ``ClusterMetadata``, ``fetched_records`` and ``partition_errors`` on
messages built here."""

from __future__ import annotations

import asyncio
import time
from typing import Any
from uuid import UUID

import pytest

from kafka_specgen.fake_broker import Call, FakeCluster
from tests.support.genpkg import CORPORA

SPECS = CORPORA / "4.3.1" / "message"
NOT_LEADER_OR_FOLLOWER, NOT_COORDINATOR = 6, 16
pytestmark = pytest.mark.skipif(not SPECS.is_dir(), reason="no Kafka corpora")


@pytest.fixture
def fake() -> Any:
    with FakeCluster(SPECS, release="4.3", brokers=3, topics={"t": 6}) as cluster:
        yield cluster


def counting(cluster: FakeCluster, api_key: int) -> list[int]:
    """Count the requests of ``api_key`` the brokers get (answered as usual)."""
    seen: list[int] = []

    def count(call: Call) -> None:
        seen.append(call.node.node_id)
        return None

    cluster.control(api_key, count)
    return seen


def not_leader_once(call: Call, moved: list[int]) -> Any:
    """The first Produce is answered NOT_LEADER_OR_FOLLOWER for each partition, unwritten
    (as a broker that is no longer the leader answers); later ones as usual."""
    if moved:
        return None
    moved.append(call.node.node_id)
    topic_class = call.item(call.response, "responses")
    partition_class = call.item(topic_class, "partition_responses")
    topics = [
        call.make(topic_class, name=t.name, topic_id=t.topic_id, partition_responses=[
            call.make(partition_class, index=p.index, error_code=NOT_LEADER_OR_FOLLOWER,
                      base_offset=-1)
            for p in t.partition_data])
        for t in call.request.topic_data
    ]  # fmt: skip
    return call.reply(responses=topics)


def batches(records: Any, count: int = 6) -> dict[int, bytes]:
    return {
        p: records.build_batch([records.Record(0, 1_700_000_000_000, b"k%d" % p, b"v")])
        for p in range(count)
    }


def test_produce_and_fetch_go_to_the_leaders_and_survive_a_moved_leader(fake: Any) -> None:
    pkg = fake.package
    cluster_module, records = pkg.module("cluster"), pkg.module("records")
    host, port = fake.bootstrap.rsplit(":", 1)
    with cluster_module.Cluster.connect(fake.bootstrap) as cluster:
        metadata = cluster.metadata
        assert set(metadata.brokers) == {0, 1, 2}
        topic_id = metadata.topic_id("t")
        assert isinstance(topic_id, UUID) and metadata.topic_name(topic_id) == "t"
        assert {metadata.leader("t", p) for p in range(6)} == {0, 1, 2}
        refreshes = counting(fake, 3)
        moved: list[int] = []
        fake.control(0, lambda call: not_leader_once(call, moved))
        offsets = cluster.produce("t", batches(records))
        assert offsets == {p: 0 for p in range(6)}
        assert len(moved) == 1 and len(refreshes) == 1  # looked the leaders up again once
        fetched = cluster.fetch("t", {p: 0 for p in range(6)}, max_wait_ms=10)
        assert sorted(fetched) == list(range(6))
        for partition, read in fetched.items():
            assert read.error == 0 and read.next_offset == 1 and read.high_watermark == 1
            assert [r.key for r in read.records] == [b"k%d" % partition]
        assert fake.failures == []


def test_group_requests_find_the_coordinator_again_when_it_moved(fake: Any) -> None:
    pkg = fake.package
    cluster_module, oc = pkg.module("cluster"), pkg.module("offset_commit")
    request = oc.OffsetCommitRequest(
        group_id="g",
        generation_id_or_member_epoch=-1,
        topics=[oc.OffsetCommitRequestTopic(name="t", partitions=[
            oc.OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])],
    )  # fmt: skip
    finds = counting(fake, 10)
    fake.inject(8, NOT_COORDINATOR)

    async def main() -> Any:
        cluster = await cluster_module.AsyncCluster.connect(fake.bootstrap)
        try:
            return await cluster.group_request("g", request)
        finally:
            await cluster.close()

    answer = asyncio.run(asyncio.wait_for(main(), 30))
    assert cluster_module.partition_errors(answer) == []
    assert len(finds) == 2  # found, told NOT_COORDINATOR, found again


def test_a_lost_connection_is_opened_again(fake: Any) -> None:
    cluster_module, md = fake.package.module("cluster"), fake.package.module("metadata")
    with cluster_module.Cluster.connect(fake.bootstrap) as cluster:
        leader = cluster.metadata.leader("t", 0)
        cluster.node(leader).close()  # as if the broker had dropped it
        assert cluster.leader_request("t", 0, md.MetadataRequest(topics=None)).brokers


def test_readers_of_responses(fake: Any) -> None:
    pkg = fake.package
    cluster_module, records, fetch = (
        pkg.module("cluster"),
        pkg.module("records"),
        pkg.module("fetch"),
    )
    metadata_module, produce = pkg.module("metadata"), pkg.module("produce")
    topic_id = UUID(int=7)
    metadata = cluster_module.ClusterMetadata.from_response(
        metadata_module.MetadataResponse(
            brokers=[metadata_module.MetadataResponseBroker(1, "h", 9092, None)],
            topics=[metadata_module.MetadataResponseTopic(name="t", topic_id=topic_id, partitions=[
                metadata_module.MetadataResponsePartition(partition_index=0, leader_id=1)])],
        )
    )  # fmt: skip
    assert metadata.names == {topic_id: "t"} and metadata.leader("t", 0) == 1
    batch = records.build_batch(
        [records.Record(o, 0, None, b"v%d" % o) for o in range(10, 13)], base_offset=10
    )
    answer = fetch.FetchResponse(responses=[fetch.FetchResponseFetchableTopicResponse(
        topic_id=topic_id, partitions=[fetch.FetchResponsePartitionData(
            partition_index=0, high_watermark=13, records=batch)])])  # fmt: skip
    [read] = cluster_module.fetched_records(answer, metadata.names, {("t", 0): 11})
    assert (read.topic, read.partition, read.next_offset) == ("t", 0, 13)
    assert [r.value for r in read.records] == [b"v11", b"v12"]  # from the fetch offset on
    produced = produce.ProduceResponse(responses=[produce.ProduceResponseTopicProduceResponse(
        topic_id=topic_id, partition_responses=[
            produce.ProduceResponsePartitionProduceResponse(index=0),
            produce.ProduceResponsePartitionProduceResponse(index=1, error_code=NOT_LEADER_OR_FOLLOWER,
                                             error_message="moved")])])  # fmt: skip
    [error] = cluster_module.partition_errors(produced, metadata.names)
    assert (error.topic, error.topic_id, error.partition, error.message) == (
        "t",
        topic_id,
        1,
        "moved",
    )
    assert error.error.name == "NOT_LEADER_OR_FOLLOWER" and error.error.retriable
    assert error.path == "responses[0].partition_responses[1].error_code"
