"""The coordinator's timers: typed keys (which timer) and typed operations (what it does).

Kafka's CoordinatorTimer schedules an operation under a string key: setting a key again replaces
the earlier timer, and GroupMetadataManager builds its keys with ``classicGroupHeartbeatKey``,
``classicGroupJoinKey`` and ``classicGroupSyncKey``. Here a key is a frozen value naming the
broker and the ``__consumer_offsets`` partition that own it, so the cluster hands a fired timer
straight to its shard (no parsing, no search), and ``str(key)`` renders the string the event log
has always shown (``broker-1/heartbeat-<group>-<member>``, ``broker-1/join-<group>``, ...).
A key is hashed by the shard's timer map and by the engine's, each time it is set, fired and
cancelled: its hash is computed once (``cache_hash``).

The operation a key runs is a separate frozen value, kept by the shard beside the key: the join
key runs either the initial-delay step (with its delay state) or the join completion, and a new
one replaces the old under the same key, as in Kafka.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import frozen

from coordinator.effects import CancelTimer, SetTimer
from coordinator.result import Step


@frozen(cache_hash=True)
class ShardTimerKey:
    """A timer of the coordinator of ``__consumer_offsets`` partition ``partition`` on ``node``."""

    node: str
    partition: int


@frozen(cache_hash=True)
class HeartbeatKey(ShardTimerKey):
    """classicGroupHeartbeatKey: a member's session (or a pending member's join deadline)."""

    group_id: str
    member_id: str

    def __str__(self) -> str:
        return f"{self.node}/heartbeat-{self.group_id}-{self.member_id}"


@frozen(cache_hash=True)
class JoinKey(ShardTimerKey):
    """classicGroupJoinKey: the end of a join phase (initial delay or rebalance timeout)."""

    group_id: str

    def __str__(self) -> str:
        return f"{self.node}/join-{self.group_id}"


@frozen(cache_hash=True)
class SyncKey(ShardTimerKey):
    """classicGroupSyncKey: the pending-sync deadline after a join phase."""

    group_id: str

    def __str__(self) -> str:
        return f"{self.node}/sync-{self.group_id}"


@frozen(cache_hash=True)
class ConsumerGroupSessionKey(ShardTimerKey):
    """groupSessionTimeoutKey: a KIP-848 member's session (``session-timeout-<group>-<member>``)."""

    group_id: str
    member_id: str

    def __str__(self) -> str:
        return f"{self.node}/session-timeout-{self.group_id}-{self.member_id}"


@frozen(cache_hash=True)
class ConsumerGroupRebalanceKey(ShardTimerKey):
    """consumerGroupRebalanceTimeoutKey: how long a KIP-848 member may take to revoke
    (``rebalance-timeout-<group>-<member>``)."""

    group_id: str
    member_id: str

    def __str__(self) -> str:
        return f"{self.node}/rebalance-timeout-{self.group_id}-{self.member_id}"


@frozen(cache_hash=True)
class ConsumerGroupJoinKey(ShardTimerKey):
    """consumerGroupJoinKey: how long a classic member of a consumer group may take to rejoin
    after it was told to (``join-<group>-<member>``)."""

    group_id: str
    member_id: str

    def __str__(self) -> str:
        return f"{self.node}/join-{self.group_id}-{self.member_id}"


@frozen(cache_hash=True)
class ConsumerGroupSyncKey(ShardTimerKey):
    """consumerGroupSyncKey: how long a classic member of a consumer group may take to send
    SyncGroup after its JoinGroup (``sync-<group>-<member>``)."""

    group_id: str
    member_id: str

    def __str__(self) -> str:
        return f"{self.node}/sync-{self.group_id}-{self.member_id}"


@frozen(cache_hash=True)
class LoadKey(ShardTimerKey):
    """The end of replaying the partition after this broker became its leader."""

    def __str__(self) -> str:
        return f"{self.node}/load-{self.partition}"


@frozen(cache_hash=True)
class ExpireOffsetsKey(ShardTimerKey):
    """GroupCoordinatorShard's periodic group-metadata cleanup (offset expiry)."""

    def __str__(self) -> str:
        return f"{self.node}/expire-offsets-{self.partition}"


# --- what a timer does ----------------------------------------------------------------------------


@frozen
class ExpireHeartbeat:
    """onClassicGroupHeartbeatExpiration (or a pending member's expiry)."""

    group_id: str
    member_id: str


@frozen
class CompleteInitialJoin:
    """tryCompleteInitialRebalanceElseSchedule: the initial-delay chain and its state."""

    group_id: str
    delay_ms: int
    remaining_ms: int


@frozen
class CompleteJoin:
    """completeClassicGroupJoin when the rebalance timeout runs out."""

    group_id: str


@frozen
class ExpirePendingSync:
    """expirePendingSync: members of ``generation_id`` that never sent SyncGroup."""

    group_id: str
    generation_id: int


@frozen
class ExpireConsumerGroupSession:
    """scheduleConsumerGroupSessionTimeout's operation: fence the member (consumerGroupFenceMemberOperation)."""

    group_id: str
    member_id: str


@frozen
class ExpireConsumerGroupRebalance:
    """scheduleConsumerGroupRebalanceTimeout's operation: fence the member if it is still at
    ``member_epoch`` (it has not revoked in time)."""

    group_id: str
    member_id: str
    member_epoch: int
    rebalance_timeout_ms: int


@frozen
class ExpireConsumerGroupJoin:
    """scheduleConsumerGroupJoinTimeoutIfAbsent's operation: fence the classic member that did
    not rejoin within its rebalance timeout."""

    group_id: str
    member_id: str


@frozen
class ExpireConsumerGroupSync:
    """scheduleConsumerGroupSyncTimeout's operation: fence the classic member that did not
    send SyncGroup within its rebalance timeout."""

    group_id: str
    member_id: str


@frozen
class FinishLoad:
    """The partition's replay is over: the groups come back (onLoaded)."""

    group_id: ClassVar[None] = None


@frozen
class ExpireOffsets:
    """cleanupGroupMetadata: expire offsets and delete the Empty groups left without any."""

    group_id: ClassVar[None] = None


TimerOperation = (
    ExpireHeartbeat
    | CompleteInitialJoin
    | CompleteJoin
    | ExpirePendingSync
    | FinishLoad
    | ExpireOffsets
    | ExpireConsumerGroupSession
    | ExpireConsumerGroupRebalance
    | ExpireConsumerGroupJoin
    | ExpireConsumerGroupSync
)


class CoordinatorTimer:
    """Kafka's CoordinatorTimer for one shard: the live keys and the operation each runs.

    ``schedule`` with a key already live replaces it (the engine keeps one timer per key too);
    ``cancel`` of an unknown key is a no-op. Both return their effect and event into the call's
    ``Step``; the shard pops a fired key and dispatches its operation.
    """

    __slots__ = ("node", "partition", "timers")

    def __init__(self, node: str, partition: int) -> None:
        self.node = node
        self.partition = partition
        self.timers: dict[ShardTimerKey, TimerOperation] = {}

    def heartbeat_key(self, group_id: str, member_id: str) -> HeartbeatKey:
        return HeartbeatKey(self.node, self.partition, group_id, member_id)

    def join_key(self, group_id: str) -> JoinKey:
        return JoinKey(self.node, self.partition, group_id)

    def sync_key(self, group_id: str) -> SyncKey:
        return SyncKey(self.node, self.partition, group_id)

    def is_scheduled(self, key: ShardTimerKey) -> bool:
        return key in self.timers

    def schedule(
        self,
        out: Step,
        key: ShardTimerKey,
        delay_ms: int,
        operation: TimerOperation,
        text: str | None = None,
    ) -> None:
        """Set (or replace) ``key``; ``text``: ``str(key)``, if the caller keeps it rendered."""
        now = out.now
        deadline = now + (delay_ms if delay_ms > 0 else 0)
        self.timers[key] = operation
        out.effects.append(SetTimer(key, deadline))
        out.events.append(  # out.event, spelled out: every heartbeat re-arms a timer
            (
                "timer_set",
                {
                    "t_ms": now,
                    "node": self.node,
                    "key": str(key) if text is None else text,
                    "deadline_ms": deadline,
                    "group_id": operation.group_id,
                },
            )
        )

    def cancel(self, out: Step, key: ShardTimerKey) -> None:
        if self.timers.pop(key, None) is not None:
            out.effects.append(CancelTimer(key))
            out.event("timer_cancelled", t_ms=out.now, node=self.node, key=str(key))

    def cancel_all(self, out: Step) -> None:
        for key in list(self.timers):
            self.cancel(out, key)

    def pop(self, key: ShardTimerKey) -> TimerOperation | None:
        """The operation of a fired key, which is no longer live (None if it was not)."""
        return self.timers.pop(key, None)
