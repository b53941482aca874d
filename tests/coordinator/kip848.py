"""A harness for KIP-848 tests: a KafkaCluster, ConsumerGroupHeartbeat in and the answer out,
the coordinator's timers run by the simulation's Engine (deadline, then the order they were set),
the events of every call."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from coordinator.cluster import KafkaCluster
from coordinator.config import CoordinatorConfig
from coordinator.effects import CancelTimer, Send, SetTimer
from coordinator.kafka_uuid import Uuid
from coordinator.protocol import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
)
from coordinator.result import CoordinatorResult
from scenarios.engine import Engine

GROUP = "fooup"
_OWNER = "cluster"  # the engine's timers are per node; here one owner holds them all


class Kip848:
    """One broker (so it coordinates every group), topics by name, virtual time in ms."""

    def __init__(
        self, topics: dict[str, int] | None = None, num_brokers: int = 1, **config: Any
    ) -> None:
        self.cluster = KafkaCluster(
            num_brokers=num_brokers,
            topics=topics if topics is not None else {"foo": 6, "bar": 3},
            config=CoordinatorConfig(**config),
        )
        self.engine = Engine(timer_handler=self._fire)
        self.node = self.cluster.coordinator_for(GROUP) or "broker-0"  # where requests go
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._correlation = 0

    def topic_id(self, name: str) -> Uuid:
        return self.cluster.topology.topic_ids[name]

    def owned(
        self, **partitions: tuple[int, ...]
    ) -> tuple[ConsumerGroupHeartbeatTopicPartitions, ...]:
        return tuple(
            ConsumerGroupHeartbeatTopicPartitions(self.topic_id(t), ps)
            for t, ps in partitions.items()
        )

    def _take(self, result: CoordinatorResult) -> list[object]:
        self.events.extend(result.events)
        sent = []
        for effect in result.effects:
            if isinstance(effect, SetTimer):
                self.engine.set_timer(_OWNER, effect.key, effect.deadline_ms)
            elif isinstance(effect, CancelTimer):
                self.engine.cancel_timer(_OWNER, effect.key)
            elif isinstance(effect, Send):
                sent.append(effect.message)
        return sent

    def send(self, request: object) -> Any:
        """Deliver a request to ``self.node`` now; the one answer it gets."""
        self._correlation += 1
        sent = self._take(
            self.cluster.handle_request(self.node, "client", self._correlation, request, self.now)
        )
        assert len(sent) == 1, sent
        return sent[0]

    def heartbeat(
        self,
        member_id: str = "",
        member_epoch: int = 0,
        group_id: str = GROUP,
        **fields: Any,
    ) -> ConsumerGroupHeartbeatResponse:
        if member_epoch == 0:
            fields.setdefault("rebalance_timeout_ms", 5000)
            fields.setdefault("topic_partitions", ())
            fields.setdefault("subscribed_topic_names", ("foo", "bar"))
        response = self.send(
            ConsumerGroupHeartbeatRequest(group_id, member_id, member_epoch, **fields)
        )
        assert isinstance(response, ConsumerGroupHeartbeatResponse)
        return response

    @property
    def now(self) -> int:
        return self.engine.now

    @property
    def timers(self) -> dict[Hashable, int]:
        """The live timers: key -> deadline, in the order they were armed (the engine's own)."""
        return self.engine.pending(_OWNER)

    def _fire(self, _owner: str, key: Hashable) -> None:
        self._take(self.cluster.handle_timer(key, self.now))

    def advance(self, ms: int) -> None:
        """Move time on by ``ms``, firing the timers due meanwhile (deadline, then set order)."""
        self.engine.run(until=self.now + ms)

    def group(self, group_id: str = GROUP):
        shard = self.cluster.service.shard_for(group_id)
        assert shard is not None
        return shard.consumer_group_manager.groups.get(group_id)

    def names(self) -> list[str]:
        return [name for name, _ in self.events]
