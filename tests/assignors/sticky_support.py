"""Test scaffolding for the sticky assignors, mirroring Kafka's AbstractStickyAssignorTest helpers.

Kafka runs most sticky tests three times (``RackConfig``): no broker racks, no consumer racks, and
both, always with replication factor 3 over 3 racks so that every partition is on every rack and
``preferRackAwareLogic`` on. The rack-aware code path must then give exactly the plain result.
``KafkaStickyEnv`` reproduces those fixtures (broker layout, consumer racks, the three
subscription "versions" each assignor builds) so the ported tests read like the originals.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from assignors.api import ClusterMetadata, Subscription, TopicPartition
from assignors.cooperative_sticky import CooperativeStickyAssignor
from assignors.sticky import StickyAssignor
from assignors.sticky_common import AbstractStickyAssignor
from assignors.sticky_user_data import encode_sticky_user_data

ALL_RACKS = ("a", "b", "c", "d", "e", "f")
DEFAULT_GENERATION = -1
GENERATION_ID = 1


class RackConfig(enum.Enum):
    NO_BROKER_RACK = "no-broker-rack"
    NO_CONSUMER_RACK = "no-consumer-rack"
    BROKER_AND_CONSUMER_RACK = "broker-and-consumer-rack"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def parse_tps(text: str) -> list[TopicPartition]:
    return [TopicPartition.parse(s) for s in text.split(", ")] if text else []


class KafkaStickyEnv:
    """One test's state: the assignor, its rack configuration and the partition layout."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.assignor: AbstractStickyAssignor = self.create_assignor()
        self.num_broker_racks = 0
        self.has_consumer_rack = False
        self.replication_factor = 2
        self.next_partition_index = 0
        self.racks: dict[str, list[list[str | None]]] = {}
        self.counts: dict[str, int] = {}

    @property
    def cooperative(self) -> bool:
        return self.kind == "cooperative-sticky"

    def create_assignor(self) -> AbstractStickyAssignor:
        return (
            CooperativeStickyAssignor() if self.kind == "cooperative-sticky" else StickyAssignor()
        )

    def initialize_racks(self, config: RackConfig) -> None:
        self.replication_factor = 3
        self.num_broker_racks = 3 if config != RackConfig.NO_BROKER_RACK else 0
        self.has_consumer_rack = config != RackConfig.NO_CONSUMER_RACK
        self.assignor.prefer_rack_aware_logic = True

    # -- cluster ---------------------------------------------------------------------------------
    def add_topic(self, topic: str, partitions: int) -> None:
        """``partitionsPerTopic.put(topic, partitionInfos(topic, n))``."""
        index = self.next_partition_index
        self.next_partition_index += 1
        rf = self.replication_factor
        n_brokers = rf if self.num_broker_racks <= 0 else self.num_broker_racks * rf
        broker_racks = [
            None if self.num_broker_racks <= 0 else ALL_RACKS[i % self.num_broker_racks]
            for i in range(n_brokers)
        ]
        self.counts[topic] = partitions
        self.racks[topic] = [
            [broker_racks[(p + j + index) % n_brokers] for j in range(rf)]
            for p in range(partitions)
        ]

    def remove_topic(self, topic: str) -> None:
        self.counts.pop(topic)
        self.racks.pop(topic)

    def cluster(self) -> ClusterMetadata:
        racks = {t: [[r for r in rs if r] for rs in parts] for t, parts in self.racks.items()}
        return ClusterMetadata(dict(self.counts), racks if self.num_broker_racks > 0 else None)

    # -- subscriptions ---------------------------------------------------------------------------
    def consumer_rack(self, index: int) -> str | None:
        n = self.num_broker_racks if self.num_broker_racks > 0 else len(ALL_RACKS)
        return ALL_RACKS[index % n] if self.has_consumer_rack and index >= 0 else None

    def subscription(self, topics: list[str], index: int) -> Subscription:
        return Subscription(topics, None, (), DEFAULT_GENERATION, rack_id=self.consumer_rack(index))

    def v0(
        self, topics: list[str], partitions: list[TopicPartition], generation: int, index: int
    ) -> Subscription | None:
        if self.cooperative:
            return None
        data = encode_sticky_user_data(partitions, generation)
        return Subscription(topics, data, (), DEFAULT_GENERATION, rack_id=self.consumer_rack(index))

    def v1(
        self, topics: list[str], partitions: list[TopicPartition], generation: int, index: int
    ) -> Subscription:
        if self.cooperative:
            self.assignor.on_assignment(partitions, GENERATION_ID)
            data = self.assignor.subscription_user_data(topics)
            return Subscription(topics, data, partitions, DEFAULT_GENERATION)
        data = encode_sticky_user_data(partitions, generation)
        return Subscription(topics, data, partitions, DEFAULT_GENERATION)

    def v2(
        self, topics: list[str], partitions: list[TopicPartition], generation: int, index: int
    ) -> Subscription:
        if self.cooperative:
            data = self.assignor.subscription_user_data(topics)
            return Subscription(
                topics, data, partitions, generation, rack_id=self.consumer_rack(index)
            )
        data = encode_sticky_user_data(partitions, generation)
        return Subscription(topics, data, partitions, generation)

    # -- running ---------------------------------------------------------------------------------
    def assign(self, subscriptions: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
        return self.assignor.assign(self.cluster(), subscriptions)

    def verify(
        self,
        subscriptions: dict[str, Subscription],
        assignment: dict[str, list[TopicPartition]],
    ) -> None:
        """``verifyValidityAndBalance``; for the cooperative assignor, first run the follow-up rounds.

        Like Kafka's cooperative override, this *mutates* both maps: later assertions in a test
        see the final assignment and the updated subscriptions.
        """
        if self.cooperative:
            rebalances = 0
            while cooperative_revocations(subscriptions, assignment):
                for member, parts in assignment.items():
                    old = subscriptions[member]
                    rack_index = ALL_RACKS.index(old.rack_id) if old.rack_id else -1
                    subscriptions[member] = self.v2(
                        list(old.topics), parts, GENERATION_ID, rack_index
                    )
                new = self.assign(subscriptions)
                assignment.clear()
                assignment.update(new)
                rebalances += 1
                assert rebalances <= 4
        verify_validity_and_balance(subscriptions, assignment)


def cooperative_revocations(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, list[TopicPartition]]
) -> bool:
    """Assert nothing is both revoked and added in one round; True if something was revoked."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member, parts in assignment.items():
        owned = set(subscriptions[member].owned_partitions)
        revoked |= owned - set(parts)
        added |= set(parts) - owned
    assert not (added & revoked), f"revoked and reassigned in the same round: {added & revoked}"
    return bool(revoked)


def verify_validity_and_balance(
    subscriptions: Mapping[str, Subscription], assignment: Mapping[str, list[TopicPartition]]
) -> None:
    """Kafka's pairwise check: subscribed topics only, no sharing, and no movable imbalance."""
    assert set(subscriptions) == set(assignment)
    members = sorted(assignment)
    for i, a in enumerate(members):
        pa = assignment[a]
        for partition in pa:
            assert partition.topic in subscriptions[a].topics, f"{partition} not subscribed by {a}"
        for b in members[i + 1 :]:
            pb = assignment[b]
            assert not set(pa) & set(pb), f"{a} and {b} share {set(pa) & set(pb)}"
            if abs(len(pa) - len(pb)) <= 1:
                continue
            ta = {p.topic for p in pa}
            tb = {p.topic for p in pb}
            assert not ta & tb, (
                f"{a} ({len(pa)}) and {b} ({len(pb)}) could be balanced on {ta & tb}"
            )


def is_fully_balanced(assignment: Mapping[str, list[TopicPartition]]) -> bool:
    sizes = [len(v) for v in assignment.values()]
    return max(sizes) - min(sizes) <= 1


def transferring(env: KafkaStickyEnv) -> dict[TopicPartition, str] | None:
    return env.assignor.partitions_transferring_ownership
