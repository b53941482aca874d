"""Kafka's server-side assignor contract (KIP-848), as typed Python.

Mirrors ``org.apache.kafka.coordinator.group.api.assignor`` at 1eb7644 (the group-coordinator-api
module): ``PartitionAssignor`` / ``ConsumerGroupPartitionAssignor``, ``GroupSpec``,
``MemberSubscription``, ``MemberAssignment``, ``GroupAssignment``, ``SubscribedTopicDescriber``,
``SubscriptionType`` and ``PartitionAssignorException``. Interfaces are Protocols; values are
frozen attrs classes. Topic ids are :class:`coordinator.kafka_uuid.Uuid`.

**Order.** Kafka's uniform assignor walks Java ``HashMap``/``HashSet`` collections, so its result
depends on their iteration order. Here every ``Mapping`` and ``AbstractSet`` handed to or returned
by an assignor *iterates in the order the Java collection Kafka holds at that point would*: the
caller builds its inputs in that order (``coordinator.assignor.spec`` and
``coordinator.assignor.ordering`` have the helpers) and the assignors return collections that do.
Equality is Java's ``equals``: by content, ignoring order.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Mapping
from collections.abc import Set as AbstractSet
from typing import Protocol, runtime_checkable

from attrs import frozen

from coordinator.kafka_uuid import Uuid

#: ``Map<Uuid, Set<Integer>>``: partitions keyed by topic id.
TopicPartitions = Mapping[Uuid, AbstractSet[int]]


class SubscriptionType(enum.Enum):
    """SubscriptionType: whether every member subscribes to the same topics."""

    HOMOGENEOUS = "Homogeneous"
    HETEROGENEOUS = "Heterogeneous"

    def __str__(self) -> str:
        return self.value


class PartitionAssignorException(Exception):
    """PartitionAssignorException: the assignor cannot compute an assignment (a member subscribes
    to a topic missing from the metadata, partitions left over). Kafka's is an ApiException used
    only inside the coordinator."""


@runtime_checkable
class MemberAssignment(Protocol):
    """MemberAssignment: one member's partitions keyed by topic id."""

    @property
    def partitions(self) -> TopicPartitions: ...


@runtime_checkable
class MemberSubscription(Protocol):
    """MemberSubscription: what the assignor may know about a member (rack, instance id, topics)."""

    @property
    def rack_id(self) -> str | None: ...

    @property
    def instance_id(self) -> str | None: ...

    @property
    def subscribed_topic_ids(self) -> AbstractSet[Uuid]: ...


@frozen
class GroupAssignment:
    """GroupAssignment: the new target assignment, member id -> assignment.

    ``members`` iterates in the order of Kafka's result map (see the module docstring).
    """

    members: Mapping[str, MemberAssignment]


class GroupSpec(Protocol):
    """GroupSpec: the group as the assignor sees it."""

    def member_ids(self) -> Collection[str]:
        """All member ids, in the order of Kafka's member map."""
        ...

    def subscription_type(self) -> SubscriptionType: ...

    def is_partition_assigned(self, topic_id: Uuid, partition_id: int) -> bool:
        """Whether the partition is in the current target assignment of some member."""
        ...

    def member_subscription(self, member_id: str) -> MemberSubscription:
        """The member's subscription; ``ValueError`` (Kafka: IllegalArgumentException) if unknown."""
        ...

    def member_assignment(self, member_id: str) -> MemberAssignment:
        """The member's current target assignment, or an empty one for an unknown member."""
        ...


class SubscribedTopicDescriber(Protocol):
    """SubscribedTopicDescriber: partition counts (and racks) of the subscribed topics."""

    def num_partitions(self, topic_id: Uuid) -> int:
        """The topic's partition count, or -1 if the topic id is unknown."""
        ...

    def racks_for_partition(self, topic_id: Uuid, partition: int) -> AbstractSet[str]:
        """The racks of the partition's replicas; empty if unknown (Kafka's
        SubscribedTopicDescriberImpl always answers empty at 1eb7644)."""
        ...


class PartitionAssignor(Protocol):
    """PartitionAssignor: a named server-side assignor."""

    @property
    def name(self) -> str:
        """The unique name members ask for (``ConsumerGroupHeartbeat.ServerAssignor``)."""
        ...

    def assign(
        self, group_spec: GroupSpec, subscribed_topic_describer: SubscribedTopicDescriber
    ) -> GroupAssignment:
        """The new target assignment; raises :class:`PartitionAssignorException`."""
        ...


class ConsumerGroupPartitionAssignor(PartitionAssignor, Protocol):
    """ConsumerGroupPartitionAssignor: a PartitionAssignor for consumer groups (KIP-848)."""
