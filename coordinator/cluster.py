"""A Kafka cluster as ONE sans-I/O object: brokers, topics, ``__consumer_offsets`` and its
coordinators.

The runner delivers requests (``handle_request``) and fired timers (``handle_timer``) and gets
back a CoordinatorResult: the effects to carry out and the events to record. ``KafkaCluster``
composes the three parts Kafka has:

* the topology (``coordinator/topology.py``): brokers, topics, replica placement, the leaders of
  ``__consumer_offsets``; the failover that moves a partition's coordinator is here;
* the broker's request handling (``coordinator/kafka_apis.py``, Kafka's KafkaApis);
* the group coordinator service (``coordinator/service.py``, GroupCoordinatorService) with one
  GroupCoordinatorShard per ``__consumer_offsets`` partition on its leader.

Deterministic choices (documented in docs/coordinator.md): a restarted broker comes back as a
follower; it becomes leader only of partitions that had no live replica (as Kafka's unclean-free
election would) or when ``elect_preferred_leaders`` runs (Kafka's
``auto.leader.rebalance.enable`` does that every 300 s; here it is explicit); a new leader of an
offsets partition replays it for ``config.load_time_ms``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.kafka_apis import KafkaApis
from coordinator.log import OffsetsLog
from coordinator.result import NO_RESULT, CoordinatorResult, Step
from coordinator.service import GroupCoordinatorService
from coordinator.timers import ShardTimerKey
from coordinator.topology import OFFSETS_TOPIC, Topology, broker_id, broker_name
from coordinator.views import ConsumerGroupView, GroupView

__all__ = ["OFFSETS_TOPIC", "KafkaCluster", "broker_id", "broker_name"]

DEFAULT_CONFIG = CoordinatorConfig()


class KafkaCluster:
    """N brokers, user topics and the ``__consumer_offsets`` coordinators, driven by the runner."""

    handle_request: Callable[[str, str, int, object, int], CoordinatorResult]
    """``handle_request(dst, src, correlation_id, request, now_ms)``: a request arriving at
    broker ``dst`` (a dead or unknown node answers nothing). It is the brokers' request handler
    itself, ``KafkaApis.handle``, bound once: the facade adds no call to every request."""

    def __init__(
        self,
        *,
        num_brokers: int = 3,
        config: CoordinatorConfig = DEFAULT_CONFIG,
        topics: Mapping[str, int] | None = None,
        broker_racks: Sequence[str | None] | None = None,
        replication_factor: int = 3,
        seed: int = 0,
        rng: random.Random | None = None,
    ) -> None:
        """``rng`` draws the member ids' UUIDs (default ``random.Random(seed)``); a replay of
        Kafka's recorded answers passes one that repeats the recording's ids."""
        self.topology = Topology(
            num_brokers=num_brokers,
            broker_racks=broker_racks,
            replication_factor=replication_factor,
            offsets_partitions=config.offsets_topic_num_partitions,
        )
        self.broker_nodes = self.topology.broker_nodes
        self.broker_racks = self.topology.broker_racks
        self.replication_factor = self.topology.replication_factor
        self.rng = rng if rng is not None else random.Random(seed)
        self.offsets_log = OffsetsLog(config.offsets_topic_num_partitions)
        self.service = GroupCoordinatorService(
            config=config,
            offsets_log=self.offsets_log,
            rng=self.rng,
            is_alive=self.is_alive,
            topology=self.topology,
        )
        self.apis = KafkaApis(config=config, topology=self.topology, service=self.service)
        self.handle_request = self.apis.handle
        # Every offsets partition starts on its preferred leader, loaded.
        for p, leader in enumerate(self.topology.offsets_leader):
            assert leader is not None
            self.service.start(p, leader)
        for name, count in (topics or {}).items():
            self.create_topic(name, count)

    @property
    def config(self) -> CoordinatorConfig:
        return self.service.config

    @config.setter
    def config(self, config: CoordinatorConfig) -> None:
        """A new broker config applies to the coordinators elected from now on (and to the
        broker's checks); the loaded ones keep theirs."""
        self.service.config = config
        self.apis.config = config

    # --- topology ------------------------------------------------------------------------------

    def replicas_of(self, topic: str, partition: int) -> tuple[str, ...]:
        """Replica nodes of a partition, preferred leader first (the same rule for every topic)."""
        return self.topology.replicas(partition)

    def is_alive(self, node: str) -> bool:
        return self.topology.alive.get(node, False)

    def offsets_partition_leader(self, partition: int) -> str | None:
        return self.topology.offsets_leader[partition]

    def partition_for(self, group_id: str) -> int:
        return self.service.partition_for(group_id)

    def coordinator_for(self, group_id: str) -> str | None:
        """The broker currently leading (and done loading) the group's offsets partition."""
        return self.service.coordinator_for(group_id)

    # --- topics --------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        """CreateTopics (an illegal name: ValueError with Kafka's reason)."""
        self.topology.create_topic(name, partitions)
        self.service.on_topics_changed(name)

    def add_partitions(self, name: str, count: int) -> None:
        """Grow a topic to ``count`` partitions in total (Kafka's CreatePartitions semantics)."""
        self.topology.add_partitions(name, count)
        self.service.on_topics_changed(name)

    def delete_topic(self, name: str, now_ms: int = 0) -> CoordinatorResult:
        """Delete a topic; every group's committed offsets of it get tombstones.

        Kafka's broker tells the group coordinator of the deleted partitions
        (GroupCoordinatorService.onPartitionsDeleted), and each loaded coordinator writes the
        tombstones (OffsetMetadataManager.onPartitionsDeleted).
        """
        self.topology.delete_topic(name)
        self.service.on_topics_changed(name)
        out = Step(now_ms)
        self.service.on_partitions_deleted(out, name)
        return out.result()

    def topics(self) -> dict[str, int]:
        return dict(self.topology.topics)

    # --- queries -------------------------------------------------------------------------------

    def group(self, group_id: str) -> GroupView | None:
        return self.service.group(group_id)

    def consumer_group(self, group_id: str) -> ConsumerGroupView | None:
        """A KIP-848 consumer group's snapshot (None if the group is not a consumer group)."""
        return self.service.consumer_group(group_id)

    def groups(self) -> list[GroupView]:
        return self.service.groups()

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        """The group's committed offsets as the coordinator holds them ({(topic, p): offset})."""
        return self.service.committed_offsets(group_id)

    # --- transactions ----------------------------------------------------------------------------

    def complete_transaction(
        self, partition: int, producer_id: int, commit: bool, now_ms: int
    ) -> tuple[Errors, CoordinatorResult]:
        """The transaction coordinator ends ``producer_id``'s transaction on offsets partition
        ``partition`` (Kafka's WriteTxnMarkers → GroupCoordinatorService.completeTransaction):
        its COMMIT or ABORT marker is written there and its pending TxnOffsetCommit offsets
        become committed or are dropped. The error is NONE, or why the marker could not be
        written (the transaction coordinator would retry)."""
        if not 0 <= partition < self.offsets_log.num_partitions:
            raise ValueError(f"no __consumer_offsets partition {partition}")
        out = Step(now_ms)
        error = self.service.complete_transaction(out, partition, producer_id, commit)
        return error, out.result()

    # --- fault injection -----------------------------------------------------------------------

    def fail_next_append(self, error: Errors, count: int = 1) -> None:
        """Make the next ``count`` appends to ``__consumer_offsets`` fail with ``error``."""
        self.offsets_log.fail_next_append(error, count)

    # --- brokers and failover ------------------------------------------------------------------

    def fail_broker(self, node: str, now_ms: int) -> CoordinatorResult:
        """Kill ``node``: leadership of its offsets partitions moves to the next live replica."""
        alive = self.topology.alive
        if node not in alive:
            raise ValueError(f"unknown broker {node!r}")
        if not alive[node]:
            return NO_RESULT
        alive[node] = False
        out = Step(now_ms)
        out.event("broker_failed", t_ms=now_ms, node=node)
        for p, new in self.topology.elections(lost=node):
            self._move_leadership(out, p, new)
        return out.result()

    def restart_broker(
        self, node: str, now_ms: int, config: CoordinatorConfig | None = None
    ) -> CoordinatorResult:
        """Bring ``node`` back as a follower; it leads only partitions that had no live replica.

        With ``config``, the broker comes back with that configuration (a rolling restart's step):
        the coordinators elected on it from now on use it, the other brokers keep theirs."""
        alive = self.topology.alive
        if node not in alive:
            raise ValueError(f"unknown broker {node!r}")
        if alive[node]:
            return NO_RESULT
        if config is not None:
            self.service.broker_configs[node] = config
        alive[node] = True
        out = Step(now_ms)
        out.event("broker_restarted", t_ms=now_ms, node=node)
        for p, new in self.topology.elections(lost=None):
            self._move_leadership(out, p, new)
        return out.result()

    def elect_preferred_leaders(self, now_ms: int) -> CoordinatorResult:
        """Move every offsets partition back to its preferred (first) replica if it is alive."""
        out = Step(now_ms)
        for p, preferred in self.topology.preferred_elections():
            self._move_leadership(out, p, preferred)
        return out.result()

    def _move_leadership(self, out: Step, p: int, new: str | None) -> None:
        """The old leader's coordinator resigns, the new one is elected and starts loading."""
        old = self.service.on_resignation(out, p)
        self.topology.offsets_leader[p] = new
        out.event(
            "partition_leader_changed",
            t_ms=out.now,
            node=new or "-",
            partition=p,
            leader_from=old,
            leader_to=new,
        )
        if new is not None:
            self.service.on_election(out, p, new)

    # --- the runner's entry points -------------------------------------------------------------

    def handle_timer(self, key: object, now_ms: int) -> CoordinatorResult:
        """A fired timer goes straight to the shard that owns it (its key names the partition and
        the broker); one of a broker that died or lost the partition since is ignored."""
        if not isinstance(key, ShardTimerKey):
            return NO_RESULT
        shard = self.service.shards.get(key.partition)
        if shard is None or shard.node != key.node or not self.is_alive(key.node):
            return NO_RESULT
        return shard.fire_timer(key, now_ms)
