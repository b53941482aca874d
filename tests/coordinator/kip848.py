"""A harness for KIP-848 tests: a KafkaCluster, ConsumerGroupHeartbeat in and the answer out,
the coordinator's timers kept and fired in deadline order, the events of every call."""

from __future__ import annotations

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

GROUP = "fooup"


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
        self.now = 0
        self.node = self.cluster.coordinator_for(GROUP) or "broker-0"  # where requests go
        self.timers: dict[object, int] = {}
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
                self.timers[effect.key] = effect.deadline_ms
            elif isinstance(effect, CancelTimer):
                self.timers.pop(effect.key, None)
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

    def advance(self, ms: int) -> None:
        """Move time on by ``ms``, firing the timers due meanwhile in deadline order."""
        until = self.now + ms
        while True:
            due = [(d, str(k), k) for k, d in self.timers.items() if d <= until]
            if not due:
                break
            deadline, _, key = min(due)
            del self.timers[key]
            self.now = deadline
            self._take(self.cluster.handle_timer(key, deadline))
        self.now = until

    def group(self, group_id: str = GROUP):
        shard = self.cluster.service.shard_for(group_id)
        assert shard is not None
        return shard.consumer_group_manager.groups.get(group_id)

    def names(self) -> list[str]:
        return [name for name, _ in self.events]
