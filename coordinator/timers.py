"""The coordinator's timers: typed keys (which timer) and typed operations (what it does).

Kafka's CoordinatorTimer schedules an operation under a string key: setting a key again replaces
the earlier timer, and GroupMetadataManager builds its keys with ``classicGroupHeartbeatKey``,
``classicGroupJoinKey`` and ``classicGroupSyncKey``. Here a key is a frozen value naming the
broker and the ``__consumer_offsets`` partition that own it, so the cluster hands a fired timer
straight to its shard (no parsing, no search), and ``str(key)`` renders the string the event log
has always shown (``broker-1/heartbeat-<group>-<member>``, ``broker-1/join-<group>``, ...).

The operation a key runs is a separate frozen value, kept by the shard beside the key: the join
key runs either the initial-delay step (with its delay state) or the join completion, and a new
one replaces the old under the same key, as in Kafka.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import frozen


@frozen
class ShardTimerKey:
    """A timer of the coordinator of ``__consumer_offsets`` partition ``partition`` on ``node``."""

    node: str
    partition: int


@frozen
class HeartbeatKey(ShardTimerKey):
    """classicGroupHeartbeatKey: a member's session (or a pending member's join deadline)."""

    group_id: str
    member_id: str

    def __str__(self) -> str:
        return f"{self.node}/heartbeat-{self.group_id}-{self.member_id}"


@frozen
class JoinKey(ShardTimerKey):
    """classicGroupJoinKey: the end of a join phase (initial delay or rebalance timeout)."""

    group_id: str

    def __str__(self) -> str:
        return f"{self.node}/join-{self.group_id}"


@frozen
class SyncKey(ShardTimerKey):
    """classicGroupSyncKey: the pending-sync deadline after a join phase."""

    group_id: str

    def __str__(self) -> str:
        return f"{self.node}/sync-{self.group_id}"


@frozen
class LoadKey(ShardTimerKey):
    """The end of replaying the partition after this broker became its leader."""

    def __str__(self) -> str:
        return f"{self.node}/load-{self.partition}"


@frozen
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
)
