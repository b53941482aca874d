"""The ZooKeeper-era assignors of the old Scala consumer (Kafka 0.8.2 to 1.1, removed in 2.0).

That consumer ran ``num.streams`` consumer threads per member, and partitions went to *threads*.
A thread id prints as ``"<consumer id>-<n>"`` and threads are ordered by that printed string
(Scala's ``ConsumerThreadId.compare`` compares ``toString``), so ``C1-10`` sorts before ``C1-2``.
Each member's thread count comes from :attr:`assignors.api.Subscription.num_streams`, used for
every topic it subscribes to, and the result has one entry per thread (``"C1-0"``, ``"C1-1"``,
...), every thread included. :func:`threads_by_member` folds threads back into their member.

``legacy-range``: per topic, the topic's threads in string order take contiguous ranges; the
first ``P % T`` threads get one extra partition (P partitions, T threads). Lists are in (topic,
partition) order.

``legacy-roundrobin``: every partition of every subscribed topic, stable-sorted by the signed
32-bit Java ``hashCode`` of its Scala ``TopicAndPartition.toString`` (``"[t,p]"`` up to 0.11,
``"t-p"`` in 1.0 and 1.1: ``string_format`` picks the era), is dealt to the sorted threads in turn.
From 0.10.2 (KAFKA-2434) threads whose member does not subscribe to the partition's topic are
skipped; before that, the assignor required every topic to have the same set of threads and
failed otherwise (``require_identical_subscriptions=True``). Lists are in dealing order.

Deterministic rule where Scala was not: the pre-sort order, which only matters for partitions
with *equal* hashes, was ZooKeeper's HashMap order; here it is topics in Java string order, then
partition number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from assignors.api import (
    Assignment,
    ClusterLike,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    as_cluster,
    partitions_of,
)
from assignors.common import AssignmentInputError, check_inputs
from coordinator.java import java_sorted, java_string_hashcode

StringFormat = Literal["[t,p]", "t-p"]


class LegacyAssignmentError(ValueError):
    """The old round-robin assignor refused the group (pre-0.10.2 identical-subscription rule)."""


def thread_ids(member_id: str, num_streams: int) -> list[str]:
    """``ConsumerThreadId(member, n).toString`` for ``n`` in ``0 .. num_streams - 1``."""
    return [f"{member_id}-{n}" for n in range(num_streams)]


def _threads(subscriptions: Mapping[str, Subscription]) -> dict[str, list[str]]:
    out = {}
    for member, sub in subscriptions.items():
        n = sub.num_streams
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise AssignmentInputError(
                f"member {member!r}: num_streams must be an integer >= 1, got {n!r}"
            )
        out[member] = thread_ids(member, n)
    return out


def _threads_per_topic(
    subscriptions: Mapping[str, Subscription], threads: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """ZooKeeper's ``getConsumersPerTopic``: each subscribed topic's threads, in string order."""
    per_topic: dict[str, list[str]] = {}
    for member, sub in subscriptions.items():
        for topic in dict.fromkeys(sub.topics):
            per_topic.setdefault(topic, []).extend(threads[member])
    return {t: java_sorted(ts) for t, ts in per_topic.items()}


def threads_by_member(
    assignment: Mapping[str, list[TopicPartition]], subscriptions: Mapping[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    """Fold a legacy per-thread assignment into per-member lists (threads in numeric order)."""
    return {
        m: [tp for t in thread_ids(m, s.num_streams) for tp in assignment.get(t, [])]
        for m, s in subscriptions.items()
    }


class LegacyRangeAssignor(PartitionAssignor):
    """Scala ``kafka.consumer.RangeAssignor`` over consumer threads; see the module docstring."""

    name = "legacy-range"

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        meta = as_cluster(cluster)
        check_inputs(meta, subscriptions)
        threads = _threads(subscriptions)
        assignment: Assignment = {
            t: [] for t in java_sorted(t for ts in threads.values() for t in ts)
        }
        per_topic = _threads_per_topic(subscriptions, threads)
        for topic in java_sorted(per_topic):
            count = meta.partitions_per_topic.get(topic, 0)
            if count <= 0:
                continue
            topic_threads = per_topic[topic]
            per, extra = divmod(count, len(topic_threads))
            parts = partitions_of(topic, count)
            for k, thread in enumerate(topic_threads):
                start = per * k + min(k, extra)
                n = per + (1 if k < extra else 0)
                assignment[thread].extend(parts[start : start + n])
        return assignment


class LegacyRoundRobinAssignor(PartitionAssignor):
    """Scala ``kafka.consumer.RoundRobinAssignor`` over consumer threads; see the module docstring."""

    name = "legacy-roundrobin"

    def __init__(
        self,
        *,
        string_format: StringFormat = "[t,p]",
        require_identical_subscriptions: bool = False,
    ) -> None:
        if string_format not in ("[t,p]", "t-p"):
            raise ValueError(
                f"string_format must be '[t,p]' (Kafka before 1.0) or 't-p' (1.0, 1.1), got {string_format!r}"
            )
        self.string_format: StringFormat = string_format
        self.require_identical_subscriptions = require_identical_subscriptions

    def partition_string(self, tp: TopicPartition) -> str:
        """``TopicAndPartition.toString`` of the configured era."""
        if self.string_format == "[t,p]":
            return f"[{tp.topic},{tp.partition}]"
        return f"{tp.topic}-{tp.partition}"

    def hash_order(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        """Stable sort by the signed Java ``hashCode`` of each partition's string."""
        return sorted(partitions, key=lambda tp: java_string_hashcode(self.partition_string(tp)))

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        meta = as_cluster(cluster)
        check_inputs(meta, subscriptions)
        topics = java_sorted({t for s in subscriptions.values() for t in s.topics})
        laid_out = [
            tp
            for topic in topics
            for tp in partitions_of(topic, max(0, meta.partitions_per_topic.get(topic, 0)))
        ]
        return self.assign_in_order(self.hash_order(laid_out), subscriptions)

    def assign_in_order(
        self, ordered: Sequence[TopicPartition], subscriptions: Mapping[str, Subscription]
    ) -> Assignment:
        """Deal ``ordered`` instead of the hash order: replays a made-up order, such as the
        "suppose the hash-sorted order is ..." examples of old blog posts, through the real dealing."""
        threads = _threads(subscriptions)
        all_threads = java_sorted(t for ts in threads.values() for t in ts)
        assignment: Assignment = {t: [] for t in all_threads}
        per_topic = _threads_per_topic(subscriptions, threads)
        if not per_topic:
            return assignment
        if self.require_identical_subscriptions:
            _require_identical(per_topic)
        unknown = [tp for tp in ordered if tp.topic not in per_topic]
        if unknown:
            raise AssignmentInputError(f"nobody subscribes to the topic of {unknown[0]}")
        return self.deal(list(ordered), all_threads, per_topic, assignment)

    @staticmethod
    def deal(
        ordered: list[TopicPartition],
        all_threads: list[str],
        per_topic: Mapping[str, list[str]],
        assignment: Assignment,
    ) -> Assignment:
        """Deal partitions, in the given order, to a circular iterator over the sorted threads,
        skipping threads that do not consume the partition's topic (0.10.2+ ``dropWhile``)."""
        members_of = {t: frozenset(ts) for t, ts in per_topic.items()}
        cursor = 0
        n = len(all_threads)
        for tp in ordered:
            eligible = members_of[tp.topic]
            while all_threads[cursor] not in eligible:
                cursor = (cursor + 1) % n
            assignment[all_threads[cursor]].append(tp)
            cursor = (cursor + 1) % n
        return assignment


def _require_identical(per_topic: Mapping[str, list[str]]) -> None:
    topics = java_sorted(per_topic)
    head = set(per_topic[topics[0]])
    for topic in topics[1:]:
        if set(per_topic[topic]) != head:
            raise LegacyAssignmentError(
                "Round-robin assignment is allowed only if all consumers in the group subscribe to "
                "the same topics AND if the stream counts across topics are identical for a given "
                f"consumer instance (Kafka before 0.10.2). Topic {topics[0]!r} has threads "
                f"{sorted(head)}, topic {topic!r} has {per_topic[topic]}."
            )
