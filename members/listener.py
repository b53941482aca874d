"""ConsumerRebalanceListener: the user's hooks, and the record of every callback the consumer ran.

Kafka's listener has three methods; ``on_partitions_lost`` defaults to calling
``on_partitions_revoked`` (ConsumerRebalanceListener.onPartitionsLost's default body). A user
object only needs the methods it cares about: missing ones are skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from attrs import field, frozen

from assignors.api import TopicPartition
from coordinator.tuples import to_tuple


@runtime_checkable
class RebalanceListener(Protocol):
    def on_partitions_revoked(self, partitions: Sequence[TopicPartition]) -> None: ...

    def on_partitions_assigned(self, partitions: Sequence[TopicPartition]) -> None: ...


class NoOpRebalanceListener:
    """Kafka's NoOpConsumerRebalanceListener."""

    def on_partitions_revoked(self, partitions: Sequence[TopicPartition]) -> None:
        return None

    def on_partitions_assigned(self, partitions: Sequence[TopicPartition]) -> None:
        return None


@frozen
class CallbackRecord:
    """One listener invocation, as the consumer's history and the ``rebalance_callback`` event."""

    t_ms: int
    callback: str  # "revoked" | "assigned" | "lost"
    partitions: tuple[TopicPartition, ...] = field(converter=to_tuple)
    generation_id: int = -1

    def partition_names(self) -> list[str]:
        return [str(tp) for tp in self.partitions]


def invoke(listener: object, callback: str, partitions: Sequence[TopicPartition]) -> None:
    """Call the user's method for ``callback``; ``lost`` falls back to ``revoked`` like Kafka."""
    if listener is None:
        return
    parts = list(partitions)
    if callback == "lost":
        method = getattr(listener, "on_partitions_lost", None)
        if method is None:
            method = getattr(listener, "on_partitions_revoked", None)
    else:
        method = getattr(listener, f"on_partitions_{callback}", None)
    if method is not None:
        method(parts)
