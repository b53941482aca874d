"""Test helpers mirroring the rack fixtures of Kafka's ``AbstractPartitionAssignorTest``.

Kafka's tests place replica ``j`` of partition ``i`` on broker ``(i + j + next_index) % brokers``
and give broker ``b`` a rack from a list; ``next_index`` runs on across topics (in the order the
test lists them) so that topics start on different brokers. These helpers rebuild the same
placement as :class:`assignors.api.ClusterMetadata` so that Kafka's expectations port verbatim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignors.api import Assignment, ClusterMetadata, PartitionAssignor, Subscription

ALL_RACKS = ("a", "b", "c", "d", "e", "f")


def racks(n: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(n)]


def null_racks(n: int) -> list[str | None]:
    return [None] * n


def replica_racks(
    count: int, replication_factor: int, broker_racks: Sequence[str | None], next_index: int
) -> list[list[str | None]]:
    """Each partition's replica racks (``None`` for a broker without a rack)."""
    n = len(broker_racks)
    return [
        [broker_racks[(i + j + next_index) % n] for j in range(replication_factor)]
        for i in range(count)
    ]


def kafka_broker_racks(replication_factor: int, num_broker_racks: int) -> list[str | None]:
    """``partitionInfos(topic, n, rf, numBrokerRacks, ...)``: rf brokers per rack, or rf without racks."""
    if num_broker_racks <= 0:
        return [None] * replication_factor
    return [ALL_RACKS[i % num_broker_racks] for i in range(num_broker_racks * replication_factor)]


def cluster_with_racks(
    counts: Mapping[str, int], replication_factor: int, broker_racks: Sequence[str | None]
) -> ClusterMetadata:
    """Kafka's ``partitionsPerTopic(...)``: topics in the mapping's order share a running index."""
    partition_racks = {}
    next_index = 0
    for topic, count in counts.items():
        placement = replica_racks(count, replication_factor, broker_racks, next_index)
        partition_racks[topic] = [[r for r in reps if r is not None] for reps in placement]
        next_index += count
    return ClusterMetadata(dict(counts), partition_racks)


def sorted_string(partitions) -> str:
    """Kafka's ``toSortedString``: ``str(tp)`` sorted as strings, comma-joined."""
    return ", ".join(sorted(str(tp) for tp in partitions))


def rack_mismatches(
    assignment: Assignment, cluster: ClusterMetadata, member_racks: Mapping[str, str | None]
) -> int:
    total = 0
    for member, parts in assignment.items():
        rack = member_racks.get(member)
        if rack is None:
            continue
        total += sum(1 for tp in parts if rack not in cluster.racks_of(tp.topic, tp.partition))
    return total


def verify_rack_assignment(
    assignor: PartitionAssignor,
    counts: Mapping[str, int],
    replication_factor: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    expected: Sequence[str],
    expected_mismatches: int,
) -> Assignment:
    """``AbstractPartitionAssignorTest.verifyRackAssignment`` (members ``consumer0``, ...)."""
    cluster = cluster_with_racks(counts, replication_factor, broker_racks)
    members = [f"consumer{i}" for i in range(len(consumer_racks))]
    subs = {
        m: Subscription(consumer_topics[i], rack_id=consumer_racks[i])
        for i, m in enumerate(members)
    }
    result = assignor.assign(cluster, subs)
    assert {m: sorted_string(result[m]) for m in members} == dict(
        zip(members, expected, strict=True)
    )
    if expected_mismatches >= 0:
        assert (
            rack_mismatches(result, cluster, dict(zip(members, consumer_racks, strict=True)))
            == expected_mismatches
        )
    return result
