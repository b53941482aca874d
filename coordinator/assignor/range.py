"""Kafka's server-side RangeAssignor (``coordinator.group.assignor.RangeAssignor`` at 1eb7644).

Members sorted by instance id (static members first) and then member id, each subscribed topic cut
into contiguous ranges: ``numPartitions / numMembers`` each, one extra for the first
``numPartitions % numMembers`` members. Homogeneous groups co-partition; in heterogeneous groups
each topic's quota counts only its subscribers.

Order: each member's ``topic id -> RangeSet`` map iterates like Kafka's pre-sized
``HashMap<Uuid, Set<Integer>>`` (topics put in the order of the member's subscribed-topic set);
a RangeSet iterates ascending, as Kafka's does. ``GroupAssignment.members`` follows the sorted
member order (Kafka's is a HashMap that nobody iterates: the coordinator reads it by member id).
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from coordinator.assignor.api import (
    GroupAssignment,
    GroupSpec,
    MemberAssignment,
    PartitionAssignorException,
    SubscribedTopicDescriber,
    SubscriptionType,
)
from coordinator.assignor.ordering import uuid_order
from coordinator.assignor.sets import RangeSet, sized_capacity
from coordinator.assignor.spec import MemberAssignmentImpl
from coordinator.java import java_sorted, java_string_key, needs_utf16_order
from coordinator.kafka_uuid import Uuid

RANGE_ASSIGNOR_NAME = "range"
NON_EXISTENT = "Member is subscribed to a non-existent topic"


class _Topic:
    """RangeAssignor.TopicMetadata: a topic's quota state while ranges are handed out."""

    __slots__ = ("extra", "min_quota", "next_range", "num_members", "num_partitions", "topic_id")

    def __init__(self, topic_id: Uuid, num_partitions: int, num_members: int) -> None:
        self.topic_id = topic_id
        self.num_partitions = num_partitions
        self.num_members = num_members
        self.min_quota = -1
        self.extra = -1
        self.next_range = 0

    def next(self) -> RangeSet | None:
        """addPartitionsToAssignment: the member's range, or None when it is empty."""
        if self.min_quota == -1:  # maybeComputeQuota
            self.min_quota, self.extra = divmod(self.num_partitions, self.num_members)
        start = self.next_range
        quota = self.min_quota
        if self.extra > 0:
            quota += 1
            self.extra -= 1
        end = min(start + quota, self.num_partitions)
        self.next_range = end
        return RangeSet(start, end) if start < end else None


def sort_member_ids(group_spec: GroupSpec) -> list[str]:
    """RangeAssignor.sortMemberIds: static members first by instance id, then the others by
    member id, both in Java ``String.compareTo`` order (a stable sort, like Java's)."""
    ids = list(group_spec.member_ids())
    instance = {m: group_spec.member_subscription(m).instance_id for m in ids}
    if all(v is None for v in instance.values()):
        return java_sorted(ids)
    strings = [v for v in instance.values() if v is not None] + ids
    if needs_utf16_order(strings):
        return sorted(
            ids,
            key=lambda m: (
                (0, java_string_key(i))
                if (i := instance[m]) is not None
                else (1, java_string_key(m))
            ),
        )
    return sorted(ids, key=lambda m: (0, i) if (i := instance[m]) is not None else (1, m))


class RangeAssignor:
    """The ``range`` ConsumerGroupPartitionAssignor."""

    name = RANGE_ASSIGNOR_NAME

    def assign(
        self, group_spec: GroupSpec, subscribed_topic_describer: SubscribedTopicDescriber
    ) -> GroupAssignment:
        if not group_spec.member_ids():
            return GroupAssignment({})
        if group_spec.subscription_type() is SubscriptionType.HOMOGENEOUS:
            return self._homogeneous(group_spec, subscribed_topic_describer)
        return self._heterogeneous(group_spec, subscribed_topic_describer)

    @staticmethod
    def _homogeneous(group_spec: GroupSpec, describer: SubscribedTopicDescriber) -> GroupAssignment:
        member_ids = sort_member_ids(group_spec)
        num_members = len(member_ids)
        subscribed = group_spec.member_subscription(member_ids[0]).subscribed_topic_ids
        topics = []
        for topic_id in subscribed:
            num_partitions = describer.num_partitions(topic_id)
            if num_partitions == -1:
                raise PartitionAssignorException(NON_EXISTENT)
            topics.append(_Topic(topic_id, num_partitions, num_members))
        # Every member's map holds (a subset of) the same topics, put in the same order into a
        # table of the same size: one bucket order serves all.
        rank = {t: i for i, t in enumerate(uuid_order(subscribed, sized_capacity(len(topics))))}
        topics_in_map_order = sorted(topics, key=lambda t: rank[t.topic_id])
        assignments: dict[str, MemberAssignment] = {}
        for member_id in member_ids:
            assignment = {}
            for topic in topics_in_map_order:
                ranges = topic.next()
                if ranges is not None:
                    assignment[topic.topic_id] = ranges
            assignments[member_id] = MemberAssignmentImpl(assignment)
        return GroupAssignment(assignments)

    @staticmethod
    def _heterogeneous(
        group_spec: GroupSpec, describer: SubscribedTopicDescriber
    ) -> GroupAssignment:
        member_ids = sort_member_ids(group_spec)
        topics: dict[Uuid, _Topic] = {}
        subscriptions: list[AbstractSet[Uuid]] = []
        for member_id in member_ids:
            subscribed = group_spec.member_subscription(member_id).subscribed_topic_ids
            subscriptions.append(subscribed)
            for topic_id in subscribed:
                topic = topics.get(topic_id)
                if topic is None:
                    num_partitions = describer.num_partitions(topic_id)
                    if num_partitions == -1:
                        raise PartitionAssignorException(NON_EXISTENT)
                    topic = topics[topic_id] = _Topic(topic_id, num_partitions, 0)
                topic.num_members += 1
        # The map order of a member's topics depends only on its subscription (as iterated).
        orders: dict[tuple[Uuid, ...], list[_Topic]] = {}
        assignments: dict[str, MemberAssignment] = {}
        for member_id, subscribed in zip(member_ids, subscriptions, strict=True):
            key = tuple(subscribed)
            in_map_order = orders.get(key)
            if in_map_order is None:
                order = uuid_order(key, sized_capacity(len(key)))
                rank = {t: i for i, t in enumerate(order)}
                in_map_order = orders[key] = [topics[t] for t in sorted(key, key=rank.__getitem__)]
            # Ranges are handed out in subscription order; the map iterates in bucket order.
            handed = {}
            for topic_id in key:
                ranges = topics[topic_id].next()
                if ranges is not None:
                    handed[topic_id] = ranges
            assignments[member_id] = MemberAssignmentImpl(
                {t.topic_id: handed[t.topic_id] for t in in_map_order if t.topic_id in handed}
            )
        return GroupAssignment(assignments)
