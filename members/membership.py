"""Group membership: the seam a membership protocol plugs into, and the classic protocol's table
from a JoinGroup / SyncGroup error to the member's reaction.

**The seam.** ``MembershipManager`` is what the ``Consumer`` facade needs from a group
membership protocol: join (on the first ``poll()``), leave, react to its responses, failed
requests and timers, and tell the facade its state, identity and owned partitions. A method that
may send, set a timer or log takes the consumer call's ``ConsumerStep`` (``step``) first and
adds its effects and events to it. The classic
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

from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol

from attrs import frozen

from coordinator.errors import Errors

if TYPE_CHECKING:
    import random
    import re
    from collections.abc import Sequence

    from assignors.api import TopicPartition
    from coordinator.protocol import (
        JoinGroupRequestProtocol,
        JoinGroupResponse,
        SyncGroupRequestAssignment,
    )
    from members.application import ApplicationLoop
    from members.backoff import ExponentialBackoff
    from members.config import ConsumerConfig
    from members.consumer_membership import ConsumerMemberState
    from members.coordinator_lookup import CoordinatorLookup
    from members.failure import ConsumerFatal
    from members.metadata import ConsumerMetadata
    from members.network import ConsumerNetworkClient, InFlightRequest
    from members.offsets import CommitResult, CommittedOffsetsLookup
    from members.positions import FetchPositions
    from members.result import ConsumerStep
    from members.state import ConsumerStatus, Generation, MemberState
    from members.timers import ConsumerTimers

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
    lookup, metadata, offsets, the application loop and the rebalance callbacks; the membership
    manager owns the member's place in the group: its state and identity, the requests that keep
    it there, and the partitions the group gave it. Every call takes the simulated time; the
    manager sends requests, sets timers and logs events through the facade (as the other parts'
    decisions go out), so its calls return nothing. These are exactly the calls the facade
    makes: ``members.consumer.Consumer`` holds its manager as a ``MembershipManager`` and mypy
    checks it uses nothing else. ``members.classic_membership.ClassicMembershipManager`` is the
    classic implementation, ``members.consumer_membership.ConsumerMembershipManager`` the
    KIP-848 one.
    """

    #: The member's generation (classic) or member id + epoch (KIP-848); read by the facade's
    #: commits and callbacks, replaced by Kafka's test-only setNewGeneration.
    generation: Generation

    @property
    def state(self) -> str:
        """The member's state name (classic: MemberState; KIP-848: ConsumerMembershipManager's
        MemberState)."""
        ...

    @property
    def member_state(self) -> MemberState | ConsumerMemberState:
        """The state itself: classic ``MemberState`` or KIP-848's ``ConsumerMemberState``."""
        ...

    @property
    def commit_generation(self) -> Generation:
        """The generation (classic) or member id and epoch (KIP-848: only while the epoch is
        positive, CommitRequestManager's memberInfo) an OffsetCommit carries."""
        ...

    def local_commit_error(self) -> str | None:
        """Why a commit fails without being sent (classic: not STABLE, COMMIT_FAILED or
        REBALANCE_IN_PROGRESS), or None: send it."""
        ...

    @property
    def in_group(self) -> bool:
        """The member holds a generation (classic) or a positive member epoch (KIP-848)."""
        ...

    @property
    def member_id(self) -> str: ...

    @property
    def generation_id(self) -> int:
        """The generation (classic) or member epoch (KIP-848); -1 outside the group."""
        ...

    @property
    def rejoin_needed(self) -> bool: ...

    @property
    def join_in_progress(self) -> bool:
        """A join round has started and its outcome has not been consumed by ``join``."""
        ...

    @property
    def fatal(self) -> ConsumerFatal | None:
        """A failure of the background (heartbeat) side that the next poll() throws."""
        ...

    def join(self, step: ConsumerStep, now: int) -> None:
        """The application's poll() needs the member in the group: join or rejoin if needed
        (classic: joinGroupIfNeeded; KIP-848: transitionToJoining)."""

    def leave(self, step: ConsumerStep, reason: str, now: int, *, static_too: bool = False) -> None:
        """Leave the group (close, unsubscribe, a poll timeout): classic maybeLeaveGroup;
        KIP-848 leaveGroup (a heartbeat with epoch -1). ``static_too``: a static member leaves
        too (close() with ``static_leave_group_on_close``)."""

    def release_assignment(self, step: ConsumerStep, now: int) -> None:
        """Before leaving (close, unsubscribe): give up the owned partitions with the callbacks
        (classic: ConsumerCoordinator.onLeavePrepare; KIP-848: leaveGroup releases them itself
        after PREPARE_LEAVING)."""

    def on_subscription_changed(self, step: ConsumerStep, now: int) -> None:
        """subscribe() changed the topics (KIP-848: onSubscriptionUpdated, the next heartbeat
        carries them; classic: nothing, rejoinNeededOrPending compares them)."""

    def request_rejoin(self, step: ConsumerStep, reason: str, now: int) -> None:
        """The facade needs a new assignment (a commit met a rebalance, the subscription or the
        assignment does not match, partitions to revoke): AbstractCoordinator.requestRejoin."""

    def request_rejoin_if_necessary(self, step: ConsumerStep, reason: str, now: int) -> None:
        """``request_rejoin`` unless one is already requested (the first reason stays)."""

    def reset_state_and_rejoin(
        self, step: ConsumerStep, reason: str, reset_member_id: bool, now: int
    ) -> None:
        """The coordinator no longer knows this generation (an OffsetCommit answered
        ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID): resetStateAndRejoin."""

    def on_poll(self, step: ConsumerStep, now: int) -> None:
        """The application called poll() (the poll timer restarts)."""

    def on_coordinator_found(self, now: int) -> None:
        """The facade's coordinator lookup succeeded."""

    def schedule_heartbeat(self, step: ConsumerStep, now: int) -> None:
        """Something the heartbeat's next wake-up depends on changed (the coordinator, the poll
        timer, the leader's metadata wait): plan it again."""

    def stop(self) -> None:
        """The application stops using the member (a fatal error, close())."""

    def on_response(
        self, step: ConsumerStep, entry: InFlightRequest, message: object, now: int
    ) -> None:
        """An answer to one of the manager's own requests arrived."""

    def on_request_failed(
        self, step: ConsumerStep, entry: InFlightRequest, now: int, reason: str
    ) -> None:
        """One of its requests was disconnected or timed out (the facade has marked the
        coordinator unknown first)."""

    def on_timer(self, step: ConsumerStep, now: int) -> None:
        """Its heartbeat timer fired (classic: the heartbeat thread; KIP-848: the heartbeat
        interval the coordinator set)."""

    # The classic protocol's leader (ConsumerCoordinator.onLeaderElected runs on the facade and
    # answers here); a KIP-848 member has no client-side assignment and never gets these calls.

    def send_sync_group(
        self, step: ConsumerStep, assignments: tuple[SyncGroupRequestAssignment, ...], now: int
    ) -> None:
        """The leader's assignment (or a follower's empty one) goes out in SyncGroup."""

    def fail_join(
        self,
        step: ConsumerStep,
        error: Errors,
        retry: Retry,
        now: int,
        reason: str = "",
        *,
        exception: str | None = None,
    ) -> None:
        """onLeaderElected failed (an unknown or failing assignor, a bad subscription): the join
        future fails with ``error`` and joinGroupIfNeeded does ``retry``."""


class MembershipHost(Protocol):
    """What a membership manager may use of the ``Consumer`` facade it is built with (its host):
    the configuration, the process status, the application loop, the coordinator lookup, the
    timers, sending a request and waking the application thread. Whatever produces effects or
    events takes the call's ``ConsumerStep`` (members.result) as its first argument, here and on
    ``MembershipManager``: outputs go to the step the entry point passed down, never to the host. ``ClassicMembershipHost`` and ``ConsumerProtocolHost`` add
    what each protocol needs besides; mypy checks that the ``Consumer`` offers all of it where it
    builds its manager, and that the managers use nothing else."""

    @property
    def config(self) -> ConsumerConfig: ...

    @property
    def status(self) -> ConsumerStatus: ...

    @property
    def app(self) -> ApplicationLoop: ...

    @property
    def lookup(self) -> CoordinatorLookup: ...

    @property
    def _timers(self) -> ConsumerTimers: ...

    @property
    def _backoff(self) -> ExponentialBackoff: ...

    def _send(
        self,
        step: ConsumerStep,
        dst: str,
        message: object,
        now: int,
        *,
        commit: CommitResult | None = None,
        topics: tuple[str, ...] | None = None,
        **extra: Any,
    ) -> int:
        """Send a request with its timeout; the correlation id."""
        ...

    def _lookup_coordinator(self, step: ConsumerStep, now: int) -> None: ...

    def _mark_coordinator_unknown(
        self, step: ConsumerStep, cause: str, now: int, disconnected: bool = False
    ) -> None: ...

    def _maybe_drive(self, step: ConsumerStep, now: int) -> None:
        """Run the application thread's group work now if it is inside poll(), else when it
        is back."""
        ...


class ClassicMembershipHost(MembershipHost, Protocol):
    """ConsumerCoordinator's side of AbstractCoordinator's calls (the classic manager's host)."""

    @property
    def is_static(self) -> bool: ...

    @property
    def _pattern(self) -> re.Pattern[str] | None: ...

    @property
    def _pending_leader(self) -> object | None: ...

    def _rejoin_needed_or_pending(self, step: ConsumerStep, now: int) -> bool: ...

    def _pattern_metadata_fresh(self, step: ConsumerStep, now: int) -> bool: ...

    def _on_join_prepare(self, step: ConsumerStep, now: int) -> bool: ...

    def _join_protocols(self) -> tuple[JoinGroupRequestProtocol, ...]: ...

    def _on_leader_elected(self, step: ConsumerStep, resp: JoinGroupResponse, now: int) -> None: ...

    def _on_join_complete(self, step: ConsumerStep, assignment_bytes: bytes, now: int) -> None: ...

    def _on_leave_prepare(self, step: ConsumerStep, now: int) -> None: ...


class ConsumerProtocolHost(MembershipHost, Protocol):
    """What the KIP-848 manager uses besides: the subscription, metadata (topic ids), the owned
    partitions and their offsets, commits (the reconciliation's), the listener callbacks."""

    _next_auto_commit: int

    @property
    def subscription(self) -> tuple[str, ...]: ...

    @property
    def network(self) -> ConsumerNetworkClient: ...

    @property
    def fetch(self) -> FetchPositions: ...

    @property
    def offset_lookup(self) -> CommittedOffsetsLookup: ...

    @property
    def _md(self) -> ConsumerMetadata: ...

    @property
    def _rng(self) -> random.Random: ...

    def _invoke(
        self, step: ConsumerStep, callback: str, partitions: Sequence[TopicPartition], now: int
    ) -> None: ...

    def _all_consumed(self) -> dict[TopicPartition, int]: ...

    def _commit(
        self,
        step: ConsumerStep,
        offsets: dict[TopicPartition, int],
        purpose: str,
        now: int,
        *,
        sync_deadline: int | None = None,
    ) -> CommitResult: ...

    def _maybe_fetch_offsets(self, step: ConsumerStep, now: int) -> None: ...

    def _maybe_update_metadata(self, step: ConsumerStep, now: int) -> None: ...

    def _schedule_continuous_poll(self, step: ConsumerStep, now: int) -> None: ...
