"""What the coordinator hands a server-side assignor: Kafka's ``modern`` implementations of the
assignor interfaces (``GroupSpecImpl``, ``MemberSubscriptionAndAssignmentImpl``,
``MemberAssignmentImpl``, ``SubscribedTopicDescriberImpl`` and the ``TopicMetadata`` it reads),
at 1eb7644.

The coordinator builds them the way ``TargetAssignmentBuilder.build`` does: ``members`` in the
iteration order of Kafka's ``HashMap<String, MemberSubscriptionAndAssignmentImpl>`` (see
:func:`coordinator.java.java_hashmap_order`), each member's subscribed topic ids in
the order of its ``TopicIds`` view, and its current target assignment as Kafka's ``Assignment``
holds it (:func:`coordinator.assignor.ordering.assignment_from_record`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from itertools import repeat
from types import MappingProxyType
from typing import NamedTuple

from attrs import field, frozen

from coordinator.assignor.api import (
    MemberAssignment,
    MemberSubscription,
    SubscriptionType,
    TopicPartitions,
)
from coordinator.kafka_uuid import ZERO_UUID, Uuid

EMPTY_PARTITIONS: TopicPartitions = MappingProxyType({})


class MemberAssignmentImpl(NamedTuple):
    """MemberAssignmentImpl: a member's partitions keyed by topic id. A named tuple (immutable,
    equal by content) rather than an attrs class: the assignors make one per member, in bulk
    through :func:`member_assignments`, whose construction runs in C."""

    partitions: TopicPartitions


EMPTY_ASSIGNMENT = MemberAssignmentImpl(EMPTY_PARTITIONS)


def member_assignments(maps: Iterable[TopicPartitions]) -> list[MemberAssignmentImpl]:
    """``[MemberAssignmentImpl(m) for m in maps]``, without a Python call per member."""
    return list(map(tuple.__new__, repeat(MemberAssignmentImpl), zip(maps)))


class MemberSubscriptionAndAssignmentImpl(NamedTuple):
    """MemberSubscriptionAndAssignmentImpl: one member's subscription and current target
    assignment (Kafka wraps the latter in an ``Assignment``; here its partitions map directly).
    A named tuple (immutable, equal by content), so that the coordinator can make a group's
    specs in bulk (:func:`member_subscriptions`) with the construction in C."""

    rack_id: str | None
    instance_id: str | None
    subscribed_topic_ids: AbstractSet[Uuid]
    partitions: TopicPartitions = EMPTY_PARTITIONS


def member_subscriptions(
    rack_ids: Iterable[str | None],
    instance_ids: Iterable[str | None],
    subscribed_topic_ids: Iterable[AbstractSet[Uuid]],
    partitions: Iterable[TopicPartitions],
) -> list[MemberSubscriptionAndAssignmentImpl]:
    """``MemberSubscriptionAndAssignmentImpl`` of each row of the columns, without a Python
    call per member."""
    rows = zip(rack_ids, instance_ids, subscribed_topic_ids, partitions, strict=True)
    return list(map(tuple.__new__, repeat(MemberSubscriptionAndAssignmentImpl), rows))


@frozen
class GroupSpecImpl:
    """GroupSpecImpl: members keyed by id, the subscription type, and the inverted current
    target assignment (topic id -> partition -> member id)."""

    members: Mapping[str, MemberSubscriptionAndAssignmentImpl]
    subscription_type_: SubscriptionType = field(alias="subscription_type")
    inverted_member_assignment: Mapping[Uuid, Mapping[int, str]] = field(factory=dict)

    def member_ids(self) -> Collection[str]:
        return self.members.keys()

    def subscription_type(self) -> SubscriptionType:
        return self.subscription_type_

    def is_partition_assigned(self, topic_id: Uuid, partition_id: int) -> bool:
        partition_map = self.inverted_member_assignment.get(topic_id)
        return partition_map is not None and partition_id in partition_map

    def member_subscription(self, member_id: str) -> MemberSubscription:
        member = self.members.get(member_id)
        if member is None:
            raise ValueError(f"Member Id {member_id} not found.")
        return member

    def member_assignment(self, member_id: str) -> MemberAssignment:
        member = self.members.get(member_id)
        return EMPTY_ASSIGNMENT if member is None else member


def _check_topic_id(_: object, __: object, value: Uuid) -> None:
    if value == ZERO_UUID:
        raise ValueError("Topic id cannot be ZERO_UUID.")


def _check_name(_: object, __: object, value: str) -> None:
    if not value:
        raise ValueError("Topic name cannot be empty.")


def _check_partitions(_: object, __: object, value: int) -> None:
    if value < 0:
        raise ValueError("Number of partitions cannot be negative.")


@frozen
class TopicMetadata:
    """modern.TopicMetadata: a subscribed topic's id, name and partition count (immutable)."""

    id: Uuid = field(validator=_check_topic_id)
    name: str = field(validator=_check_name)
    num_partitions: int = field(validator=_check_partitions)


@frozen
class SubscribedTopicDescriberImpl:
    """SubscribedTopicDescriberImpl over ``topic id -> TopicMetadata``. Racks are always empty,
    as in Kafka at 1eb7644 (its rack-aware paths are unreachable there)."""

    topic_metadata: Mapping[Uuid, TopicMetadata]

    def num_partitions(self, topic_id: Uuid) -> int:
        topic = self.topic_metadata.get(topic_id)
        return -1 if topic is None else topic.num_partitions

    def racks_for_partition(self, topic_id: Uuid, partition: int) -> AbstractSet[str]:
        return frozenset()
