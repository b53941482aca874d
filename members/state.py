"""Client-side group state: AbstractCoordinator's MemberState and Generation, the consumer status."""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from attrs import frozen


class MemberState(StrEnum):
    """AbstractCoordinator.MemberState: where the member is in the join/sync cycle."""

    UNJOINED = "UNJOINED"
    PREPARING_REBALANCE = "PREPARING_REBALANCE"  # JoinGroup sent, no answer yet
    COMPLETING_REBALANCE = "COMPLETING_REBALANCE"  # JoinGroup answered, SyncGroup outstanding
    STABLE = "STABLE"  # assignment received

    @property
    def has_not_joined(self) -> bool:
        return self in _NOT_JOINED


#: MemberState.hasNotJoined's states (a module constant: the heartbeat thread asks every pass).
_NOT_JOINED = frozenset((MemberState.UNJOINED, MemberState.PREPARING_REBALANCE))


class ConsumerStatus(StrEnum):
    """The simulated process around the coordinator: not a Kafka concept, the runner's view."""

    NEW = "NEW"  # constructed, start() not called yet
    RUNNING = "RUNNING"
    CLOSING = "CLOSING"  # close() waits for its final offset commit
    CLOSED = "CLOSED"
    CRASHED = "CRASHED"  # silent until restart()
    FAILED = "FAILED"  # a fatal error was thrown from poll(); the application stopped


# The members the hot paths read, as module constants: reading one off its enum class goes
# through the enum metaclass's attribute hook (see coordinator.errors.NO_ERROR).
STATE_UNJOINED: Final = MemberState.UNJOINED
STATE_PREPARING_REBALANCE: Final = MemberState.PREPARING_REBALANCE
STATE_COMPLETING_REBALANCE: Final = MemberState.COMPLETING_REBALANCE
STATE_STABLE: Final = MemberState.STABLE
STATUS_NEW: Final = ConsumerStatus.NEW
STATUS_RUNNING: Final = ConsumerStatus.RUNNING
STATUS_CLOSING: Final = ConsumerStatus.CLOSING
STATUS_CLOSED: Final = ConsumerStatus.CLOSED
STATUS_CRASHED: Final = ConsumerStatus.CRASHED
STATUS_FAILED: Final = ConsumerStatus.FAILED


@frozen
class Generation:
    """AbstractCoordinator.Generation: (generation id, member id, protocol name)."""

    generation_id: int = -1
    member_id: str = ""
    protocol_name: str | None = None

    @property
    def is_reset(self) -> bool:
        """hasGenerationReset: no generation id and no protocol."""
        return self.generation_id == -1 and self.protocol_name is None

    @property
    def has_member_id(self) -> bool:
        return self.member_id != ""


NO_GENERATION = Generation()
