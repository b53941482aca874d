"""The assignor contract, mirroring Kafka's ConsumerPartitionAssignor (KIP-429 protocols included).

``TopicPartition`` is a ``NamedTuple`` rather than an attrs class on purpose: assignors build and
sort up to a million of them per call, and tuple creation, hashing and comparison run in C. It
orders by topic, then partition number (``t-2`` before ``t-10``), like Kafka's lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from functools import lru_cache
from typing import Final, NamedTuple

from attrs import field, frozen

from coordinator.tuples import to_tuple


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    @classmethod
    def parse(cls, text: str) -> TopicPartition:
        """``"orders-10"`` -> ``TopicPartition("orders", 10)``; splits at the last dash."""
        topic, sep, number = text.rpartition("-")
        if not sep or not topic or not number.isdigit():
            raise ValueError(f"not a topic-partition: {text!r} (expected e.g. 'orders-3')")
        return cls(topic, int(number))


@lru_cache(maxsize=8192)
def partitions_of(topic: str, count: int) -> tuple[TopicPartition, ...]:
    """The partitions of a topic, built once and shared.

    Kafka's assignors receive ready-made partition objects from the cluster metadata; caching
    them here lets an assignor hand out slices of one shared tuple instead of building a million
    new objects on every call.
    """
    return tuple(TopicPartition(topic, p) for p in range(count))


class RebalanceProtocol(IntEnum):
    """ConsumerPartitionAssignor.RebalanceProtocol; COOPERATIVE outranks EAGER (KIP-429)."""

    EAGER = 0
    COOPERATIVE = 1


#: RebalanceProtocol's members as module constants, for the consumer's hot paths (see
#: coordinator.errors.NO_ERROR)
EAGER: Final = RebalanceProtocol.EAGER
COOPERATIVE: Final = RebalanceProtocol.COOPERATIVE


@frozen
class Subscription:
    """One member's input to ``assign``: ConsumerPartitionAssignor.Subscription.

    ``num_streams`` is only read by the ZooKeeper-era legacy assignors (consumer threads).
    """

    topics: tuple[str, ...] = field(converter=to_tuple)
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = field(default=(), converter=to_tuple)
    generation_id: int = -1
    group_instance_id: str | None = None
    rack_id: str | None = None
    num_streams: int = 1


@frozen
class ClusterMetadata:
    """Topic partition counts, and optionally the racks of each partition's replicas (KIP-881).

    ``partition_racks`` maps a topic to a list indexed by partition of that partition's replica
    racks, e.g. ``{"t1": [["a", "b"], ["c"]]}``.
    """

    partitions_per_topic: Mapping[str, int]
    partition_racks: Mapping[str, Sequence[Sequence[str]]] | None = None

    def racks_of(self, topic: str, partition: int) -> frozenset[str]:
        if not self.partition_racks or topic not in self.partition_racks:
            return frozenset()
        racks = self.partition_racks[topic]
        return (
            frozenset(r for r in racks[partition] if r) if partition < len(racks) else frozenset()
        )


ClusterLike = Mapping[str, int] | ClusterMetadata


def as_cluster(cluster: ClusterLike) -> ClusterMetadata:
    return cluster if isinstance(cluster, ClusterMetadata) else ClusterMetadata(dict(cluster))


Assignment = dict[str, list[TopicPartition]]


class PartitionAssignor:
    """Base class for every assignor, built-in or a user's own.

    Subclasses set ``name`` (the protocol name sent in JoinGroup) and implement ``assign``.
    ``supported_protocols`` lists the rebalance protocols the assignor can run under; the
    client picks the highest protocol that all its configured assignors share.
    """

    name: str = ""
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)
    version: int = 0

    def subscription_user_data(self, topics: Iterable[str]) -> bytes | None:
        return None

    def on_assignment(self, assignment: Sequence[TopicPartition], generation_id: int) -> None:
        return None

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]) -> Assignment:
        raise NotImplementedError
