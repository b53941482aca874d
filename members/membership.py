"""Group membership: the seam a membership protocol plugs into, and the classic protocol's table
from a JoinGroup / SyncGroup error to the member's reaction.

**The seam.** ``MembershipManager`` is what the ``Consumer`` facade needs from a group
membership protocol: join (on the first ``poll()``), leave, react to its responses, failed
requests and timers, and tell the facade its state, identity and owned partitions. The classic
protocol (``group.protocol=classic``: ``AbstractCoordinator``'s JoinGroup / SyncGroup / Heartbeat)
is the first implementation; a KIP-848 member (Kafka's ``ConsumerMembershipManager``: one
ConsumerGroupHeartbeat carries joins, assignments and liveness) is meant to be the second,
behind the same calls. Everything else the consumer does (coordinator lookup, metadata, offsets,
the application loop, rebalance callbacks) does not depend on which one runs.

**The error table.** ``JOIN_ERRORS`` is ``JoinGroupResponseHandler.handle`` and
``SyncGroupResponseHandler.handle`` (AbstractCoordinator) read as one table, keyed by
``(api, error)``: what the handler does to the member first (``Action``), which exception the
join future fails with (the error's own, or a ``KafkaException`` for errors without a branch),
and what ``joinGroupIfNeeded`` then does with that failure (``Retry``: at once, after
``retry.backoff.ms``, or throw from ``poll()``). An error missing from the table is an
unexpected one: ``UNEXPECTED``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Protocol

from attrs import frozen

from assignors.api import TopicPartition
from coordinator.errors import Errors

JOIN_GROUP = "JoinGroup"
SYNC_GROUP = "SyncGroup"


class Action(Enum):
    """What a JoinGroup / SyncGroup error does to the member before the join future fails."""

    NOTHING = "nothing"
    #: MEMBER_ID_REQUIRED: take the member id the coordinator gave and rejoin with it.
    ADOPT_MEMBER_ID = "adopt member id"
    #: resetStateAndRejoin(resetMemberId=true), unless the generation changed meanwhile.
    RESET_GENERATION_AND_MEMBER_ID = "reset generation and member id"
    #: resetStateAndRejoin(resetMemberId=false), unless the generation changed meanwhile.
    RESET_GENERATION = "reset generation"
    #: markCoordinatorUnknown: rediscover the coordinator.
    MARK_COORDINATOR_UNKNOWN = "mark coordinator unknown"


class Retry(Enum):
    """What joinGroupIfNeeded does with a failed join future."""

    #: UnknownMemberId / IllegalGeneration / RebalanceInProgress / MemberIdRequired: loop again.
    IMMEDIATE = "immediate"
    #: A retriable exception: sleep retry.backoff.ms, then loop again.
    BACKOFF = "backoff"
    #: Anything else is thrown from poll() (a fatal error here).
    THROW = "throw"


@frozen
class Reaction:
    """One row of the table."""

    action: Action
    retry: Retry
    #: The exception the future fails with; None: the error's own (EXCEPTION_NAMES).
    exception: str | None = None


#: An error the handler has no branch for: the future fails with a KafkaException, thrown.
UNEXPECTED = Reaction(Action.NOTHING, Retry.THROW, "KafkaException")

_THROW = Reaction(Action.NOTHING, Retry.THROW)

#: (api, error) -> reaction: JoinGroupResponseHandler and SyncGroupResponseHandler, row by row.
JOIN_ERRORS: dict[tuple[str, Errors], Reaction] = {
    # JoinGroupResponseHandler
    (JOIN_GROUP, Errors.MEMBER_ID_REQUIRED): Reaction(Action.ADOPT_MEMBER_ID, Retry.IMMEDIATE),
    (JOIN_GROUP, Errors.UNKNOWN_MEMBER_ID): Reaction(
        Action.RESET_GENERATION_AND_MEMBER_ID, Retry.IMMEDIATE
    ),
    (JOIN_GROUP, Errors.REBALANCE_IN_PROGRESS): Reaction(Action.NOTHING, Retry.IMMEDIATE),
    (JOIN_GROUP, Errors.COORDINATOR_LOAD_IN_PROGRESS): Reaction(Action.NOTHING, Retry.BACKOFF),
    (JOIN_GROUP, Errors.COORDINATOR_NOT_AVAILABLE): Reaction(
        Action.MARK_COORDINATOR_UNKNOWN, Retry.BACKOFF
    ),
    (JOIN_GROUP, Errors.NOT_COORDINATOR): Reaction(Action.MARK_COORDINATOR_UNKNOWN, Retry.BACKOFF),
    (JOIN_GROUP, Errors.FENCED_INSTANCE_ID): _THROW,
    (JOIN_GROUP, Errors.INCONSISTENT_GROUP_PROTOCOL): _THROW,
    (JOIN_GROUP, Errors.INVALID_SESSION_TIMEOUT): _THROW,
    (JOIN_GROUP, Errors.INVALID_GROUP_ID): _THROW,
    (JOIN_GROUP, Errors.GROUP_AUTHORIZATION_FAILED): _THROW,
    (JOIN_GROUP, Errors.GROUP_MAX_SIZE_REACHED): _THROW,
    (JOIN_GROUP, Errors.UNSUPPORTED_VERSION): _THROW,
    # ILLEGAL_GENERATION has no branch of its own in JoinGroupResponseHandler: UNEXPECTED.
    # SyncGroupResponseHandler
    (SYNC_GROUP, Errors.UNKNOWN_MEMBER_ID): Reaction(
        Action.RESET_GENERATION_AND_MEMBER_ID, Retry.IMMEDIATE
    ),
    (SYNC_GROUP, Errors.ILLEGAL_GENERATION): Reaction(Action.RESET_GENERATION, Retry.IMMEDIATE),
    (SYNC_GROUP, Errors.REBALANCE_IN_PROGRESS): Reaction(Action.NOTHING, Retry.IMMEDIATE),
    (SYNC_GROUP, Errors.COORDINATOR_NOT_AVAILABLE): Reaction(
        Action.MARK_COORDINATOR_UNKNOWN, Retry.BACKOFF
    ),
    (SYNC_GROUP, Errors.NOT_COORDINATOR): Reaction(Action.MARK_COORDINATOR_UNKNOWN, Retry.BACKOFF),
    (SYNC_GROUP, Errors.GROUP_AUTHORIZATION_FAILED): _THROW,
    (SYNC_GROUP, Errors.FENCED_INSTANCE_ID): _THROW,
}


def join_reaction(api: str, error: Errors) -> Reaction:
    """The row for ``error`` answering ``api`` (JoinGroup or SyncGroup)."""
    return JOIN_ERRORS.get((api, error), UNEXPECTED)


class MembershipManager(Protocol):
    """The seam between the ``Consumer`` facade and a group membership protocol.

    The facade owns the process (start, crash, close), the network client, the coordinator
    lookup, metadata, offsets and the application loop; the membership manager owns the
    member's place in the group: its state and identity, the requests that keep it there, and
    the partitions the group gave it. Every call takes the simulated time; requests and timers
    go through the facade (as the parts do), so a manager returns nothing itself.
    """

    @property
    def state(self) -> str:
        """The member's state name (classic: MemberState; KIP-848: MemberState of
        ConsumerMembershipManager)."""
        ...

    @property
    def member_id(self) -> str: ...

    @property
    def generation_id(self) -> int:
        """The generation (classic) or member epoch (KIP-848); -1 outside the group."""
        ...

    @property
    def owned_partitions(self) -> Sequence[TopicPartition]: ...

    def join(self, now: int) -> None:
        """The application's poll() needs the member in the group: join or rejoin if needed
        (classic: joinGroupIfNeeded; KIP-848: transitionToJoining)."""

    def leave(self, reason: str, now: int) -> None:
        """Leave the group (close, unsubscribe, a poll timeout): classic maybeLeaveGroup;
        KIP-848 leaveGroup (a heartbeat with epoch -1)."""

    def on_response(self, message: object, now: int) -> None:
        """An answer to one of the manager's own requests arrived."""

    def on_request_failed(self, api: str, now: int, reason: str) -> None:
        """One of its requests was disconnected or timed out."""

    def on_timer(self, now: int) -> None:
        """Its heartbeat timer fired (classic: the heartbeat thread; KIP-848: the heartbeat
        interval the coordinator set)."""

    def on_coordinator_unknown(self, now: int) -> None:
        """The facade lost the coordinator (its requests to it have failed)."""
