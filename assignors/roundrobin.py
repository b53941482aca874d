"""Kafka's ``RoundRobinAssignor`` ("roundrobin").

Kafka sorts the members in ``MemberInfo`` order (static members by ``group.instance.id`` first)
into a circular list with a cursor, lays out every partition of the subscribed topics (topics in
Java string order, partitions numerically; no hashing), and for each partition advances the cursor
past members that do not subscribe to its topic, gives the partition to the member under the
cursor and advances once more. The cursor is global: it carries over from topic to topic.

Instead of stepping the cursor once per partition, this port does one step per topic: the
topic's subscribers, rotated to start at the first one at or after the cursor, take the topic's
partitions in turn, so subscriber ``j`` gets the strided slice ``parts[j::k]``. When everybody
subscribes to everything the whole layout is one strided slice per member. The result, list order
included, is the partition-by-partition loop's.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from itertools import chain

from assignors.api import (
    Assignment,
    ClusterLike,
    PartitionAssignor,
    Subscription,
    as_cluster,
    partitions_of,
)
from assignors.common import (
    check_inputs,
    existing_partition_counts,
    member_info_order,
    subscribers_per_topic,
)
from coordinator.java import java_sorted


class RoundRobinAssignor(PartitionAssignor):
    """``org.apache.kafka.clients.consumer.RoundRobinAssignor``; see the module docstring."""

    name = "roundrobin"

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        meta = as_cluster(cluster)
        group = check_inputs(meta, subscriptions)
        counts = existing_partition_counts(meta, group.topics)
        topics = java_sorted(counts)
        members = member_info_order(subscriptions)
        assignment: Assignment = {m: [] for m in subscriptions}
        if not topics:
            return assignment

        all_topics = frozenset(topics)
        if all(all_topics.issubset(topic_list) for topic_list in group.lists):
            # Everybody subscribes to everything: partition i goes to member i mod M.
            layout = list(chain.from_iterable(partitions_of(t, counts[t]) for t in topics))
            n = len(members)
            for i, member in enumerate(members):
                assignment[member] = layout[i::n]
            return assignment

        index_of = {m: i for i, m in enumerate(members)}
        subscriber_lists = subscribers_per_topic(group, members, topics)
        as_indexes: dict[int, list[int]] = {}  # id(shared subscriber list) -> member indexes
        subscriber_indexes: dict[str, list[int]] = {}
        for t, subs in subscriber_lists.items():
            idx = as_indexes.get(id(subs))
            if idx is None:
                idx = as_indexes[id(subs)] = [index_of[m] for m in subs]
            subscriber_indexes[t] = idx
        cursor = 0
        for topic in topics:
            indexes = subscriber_indexes[topic]  # ascending, never empty: someone subscribed
            start = bisect_left(indexes, cursor)
            if start == len(indexes):
                start = 0
            rotated = indexes[start:] + indexes[:start]
            parts = partitions_of(topic, counts[topic])
            k = len(rotated)
            for j in range(min(k, len(parts))):
                assignment[members[rotated[j]]].extend(parts[j::k])
            cursor = (rotated[(len(parts) - 1) % k] + 1) % len(members)
        return assignment
