"""The cluster's shape: brokers (alive or not), user topics, replica placement and the leaders of
``__consumer_offsets``: what Kafka's controller and metadata cache know, for this simulator.

Deterministic choices (documented in docs/coordinator.md):

* replica placement: partition ``p`` of every topic (``__consumer_offsets`` included) has replicas
  ``[(p + j) % num_brokers for j in range(min(replication_factor, num_brokers))]``; the first one
  is the preferred leader;
* leader election: the first live replica in that order (every live replica is in sync);
* ``__consumer_offsets`` exists from the start (Kafka creates it on the first FindCoordinator);
* topic ids (KIP-516): Kafka's controller draws a random one per creation; groupsim derives it from
  the name and the how-many-th creation of that name (``kafka_uuid.topic_id_for``).
"""

from __future__ import annotations

from collections.abc import Sequence

from coordinator.kafka_uuid import Uuid, topic_id_for
from coordinator.topics import invalid_topic_reason

OFFSETS_TOPIC = "__consumer_offsets"


def broker_name(node_id: int) -> str:
    return f"broker-{node_id}"


def broker_id(node: str) -> int:
    """``"broker-3"`` -> 3; -1 for anything that is not a broker name."""
    prefix, _, number = node.partition("-")
    if prefix != "broker" or not number.isdigit():
        return -1
    return int(number)


class Topology:
    """Brokers, topics, replicas, and the current leader of each ``__consumer_offsets`` partition."""

    def __init__(
        self,
        *,
        num_brokers: int,
        broker_racks: Sequence[str | None] | None,
        replication_factor: int,
        offsets_partitions: int,
    ) -> None:
        if not isinstance(num_brokers, int) or num_brokers < 1:
            raise ValueError(f"num_brokers must be a positive integer, got {num_brokers!r}")
        if not isinstance(replication_factor, int) or replication_factor < 1:
            raise ValueError(f"replication_factor must be positive, got {replication_factor!r}")
        if broker_racks is not None and len(broker_racks) != num_brokers:
            raise ValueError(
                f"broker_racks has {len(broker_racks)} entries for {num_brokers} brokers"
            )
        self.broker_nodes: tuple[str, ...] = tuple(broker_name(i) for i in range(num_brokers))
        self.broker_racks: tuple[str | None, ...] = (
            tuple(broker_racks) if broker_racks is not None else (None,) * num_brokers
        )
        self.replication_factor = min(replication_factor, num_brokers)
        self.alive: dict[str, bool] = {node: True for node in self.broker_nodes}
        self.topics: dict[str, int] = {}
        # Each topic's id (KIP-516), and how many times each name has been created: a deleted and
        # recreated topic gets a new id, as Kafka's controller draws a new one.
        self.topic_ids: dict[str, Uuid] = {}
        self._incarnations: dict[str, int] = {}
        # Leader of each __consumer_offsets partition (a node name, or None when no replica lives).
        self.offsets_leader: list[str | None] = [
            self.replicas(p)[0] for p in range(offsets_partitions)
        ]

    # --- replicas and leaders ------------------------------------------------------------------

    def replicas(self, partition: int) -> tuple[str, ...]:
        """Replica nodes of partition ``partition`` of any topic, preferred leader first."""
        n = len(self.broker_nodes)
        return tuple(self.broker_nodes[(partition + j) % n] for j in range(self.replication_factor))

    def leader_among(self, replicas: Sequence[str]) -> str | None:
        for node in replicas:
            if self.alive[node]:
                return node
        return None

    def is_alive(self, node: str) -> bool:
        return self.alive.get(node, False)

    def elections(self, lost: str | None) -> list[tuple[int, str | None]]:
        """The offsets partitions whose leader changes now, with their new leader: those led by
        ``lost`` (or by nobody) go to their first live replica."""
        moves = []
        for p, current in enumerate(self.offsets_leader):
            if current is not None and current != lost:
                continue
            new = self.leader_among(self.replicas(p))
            if new != current:
                moves.append((p, new))
        return moves

    def preferred_elections(self) -> list[tuple[int, str]]:
        """The offsets partitions whose live preferred replica is not their leader."""
        moves = []
        for p in range(len(self.offsets_leader)):
            preferred = self.replicas(p)[0]
            if self.alive[preferred] and self.offsets_leader[p] != preferred:
                moves.append((p, preferred))
        return moves

    # --- topics --------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        """CreateTopics: an illegal name is refused as Kafka's controller refuses it
        (Topic.validate: INVALID_TOPIC_EXCEPTION), with the reason in Kafka's words."""
        if not isinstance(name, str):
            raise ValueError(f"a topic name must be a string, got {name!r}")
        reason = invalid_topic_reason(name)
        if reason is not None:
            raise ValueError(f"cannot create topic {name!r}: {reason} (INVALID_TOPIC_EXCEPTION)")
        if name == OFFSETS_TOPIC:
            raise ValueError(f"cannot create topic {name!r}: it is the internal offsets topic")
        if not isinstance(partitions, int) or partitions < 1:
            raise ValueError(f"a topic needs at least one partition, got {partitions!r}")
        if name in self.topics:
            raise ValueError(f"topic {name!r} already exists")
        self.topics[name] = partitions
        incarnation = self._incarnations.get(name, 0)
        self._incarnations[name] = incarnation + 1
        self.topic_ids[name] = topic_id_for(name, incarnation)

    def topic_name(self, topic_id: Uuid) -> str | None:
        """The name of the live topic with this id (None if no topic has it)."""
        for name, known in self.topic_ids.items():
            if known == topic_id:
                return name
        return None

    def add_partitions(self, name: str, count: int) -> None:
        """Grow a topic to ``count`` partitions in total (Kafka's CreatePartitions semantics)."""
        if name not in self.topics:
            raise ValueError(f"unknown topic {name!r}")
        if not isinstance(count, int) or count <= self.topics[name]:
            raise ValueError(
                f"topic {name!r} has {self.topics[name]} partitions; the new total must be "
                f"larger, got {count!r}"
            )
        self.topics[name] = count

    def delete_topic(self, name: str) -> None:
        if name not in self.topics:
            raise ValueError(f"unknown topic {name!r}")
        del self.topics[name]
        del self.topic_ids[name]
