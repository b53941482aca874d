"""The consumer protocol's group membership (KIP-848): Kafka's ``ConsumerMembershipManager`` /
``AbstractMembershipManager`` and ``ConsumerHeartbeatRequestManager`` /
``AbstractHeartbeatRequestManager``, behind ``members.membership.MembershipManager``.

A KIP-848 member has no JoinGroup and no SyncGroup: one ConsumerGroupHeartbeat carries its join
(member epoch 0), its liveness, its subscription, the partitions it owns (the acknowledgement of
a reconciled assignment) and its leave (epoch -1, or -2 for a static member); the answer carries
the member id, the new member epoch, the heartbeat interval and, when it changed, the target
assignment (topic ids and partitions). The client reconciles that target on the application
thread: it commits (auto-commit), revokes first (onPartitionsRevoked), then assigns
(onPartitionsAssigned), then acknowledges in the next heartbeat, sent at once.

The parts, each one of Kafka's classes:

* ``ConsumerMemberState`` (Kafka's ``MemberState``) with its table of valid previous states
  (``PREVIOUS_VALID_STATES``): ``transition_to`` refuses any other move (IllegalStateException).
* ``LocalAssignment``: an assignment by topic id with the local epoch that bumps on every new
  target (``AbstractMembershipManager.LocalAssignment``).
* ``HeartbeatRequestState`` (``AbstractHeartbeatRequestManager.HeartbeatRequestState`` over
  ``RequestState``): the heartbeat timer, the interval the broker sent, the request in flight and
  the exponential backoff after failures.
* ``HeartbeatState`` (``ConsumerHeartbeatRequestManager.HeartbeatState`` + ``SentFields``): the
  request's optional fields, sent only when joining or when they changed since the last one.
* ``ConsumerMembershipManager``: the state machine, the response and error table
  (``HEARTBEAT_ERRORS``, onErrorResponse + handleSpecificError), reconciliation, fencing, leave,
  the poll timer (STALE) and the FATAL state.

Like the classic manager, it sends, sets timers and logs through its host, the ``Consumer``
facade (``MembershipHost``), and its callbacks run on the application thread (the facade's
``_maybe_drive``), where AsyncKafkaConsumer runs them (ConsumerRebalanceListenerInvoker, from
the background event queue in ``poll()``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum, StrEnum
from typing import TYPE_CHECKING

from attrs import frozen

from assignors.api import TopicPartition
from coordinator.errors import Errors
from coordinator.kafka_uuid import Uuid
from coordinator.protocol import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatTopicPartitions,
    SyncGroupRequestAssignment,
)
from members.backoff import ExponentialBackoff
from members.failure import ConsumerFatal
from members.network import InFlightRequest
from members.offsets import CommitResult
from members.state import NO_GENERATION, ConsumerStatus, Generation
from members.timers import HeartbeatTimer, JoinRetryTimer

if TYPE_CHECKING:
    from members.membership import ConsumerProtocolHost, Retry
    from members.result import ConsumerStep

CONSUMER_GROUP_HEARTBEAT = "ConsumerGroupHeartbeat"

#: The purpose of the commit before a reconciliation (maybeAutoCommitSyncBeforeRevocation).
RECONCILE_COMMIT = "reconcile"


class ConsumerMemberState(StrEnum):
    """Kafka's ``MemberState`` (consumer.internals): where a KIP-848 member is."""

    UNSUBSCRIBED = "UNSUBSCRIBED"
    JOINING = "JOINING"
    RECONCILING = "RECONCILING"
    ACKNOWLEDGING = "ACKNOWLEDGING"
    STABLE = "STABLE"
    FENCED = "FENCED"
    PREPARE_LEAVING = "PREPARE_LEAVING"
    LEAVING = "LEAVING"
    FATAL = "FATAL"
    STALE = "STALE"

    @property
    def can_handle_new_assignment(self) -> bool:
        """MemberState.canHandleNewAssignment: a state RECONCILING may follow."""
        return self in PREVIOUS_VALID_STATES[ConsumerMemberState.RECONCILING]


S = ConsumerMemberState

#: MemberState's static block: each state and the states it may be entered from.
PREVIOUS_VALID_STATES: dict[ConsumerMemberState, frozenset[ConsumerMemberState]] = {
    S.STABLE: frozenset({S.JOINING, S.ACKNOWLEDGING, S.RECONCILING}),
    S.RECONCILING: frozenset({S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING}),
    S.ACKNOWLEDGING: frozenset({S.RECONCILING}),
    S.FATAL: frozenset(
        {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING}
        | {S.UNSUBSCRIBED}
    ),
    S.FENCED: frozenset(
        {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING}
    ),
    S.JOINING: frozenset({S.FENCED, S.UNSUBSCRIBED, S.STALE}),
    S.PREPARE_LEAVING: frozenset(
        {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED}
    ),
    S.LEAVING: frozenset({S.PREPARE_LEAVING}),
    S.UNSUBSCRIBED: frozenset({S.PREPARE_LEAVING, S.LEAVING, S.FENCED}),
    S.STALE: frozenset({S.LEAVING}),
}

#: isNotInGroup
NOT_IN_GROUP = frozenset({S.UNSUBSCRIBED, S.FENCED, S.FATAL, S.STALE})
#: shouldSkipHeartbeat
SKIP_HEARTBEAT = NOT_IN_GROUP
#: shouldHeartbeatNow
HEARTBEAT_NOW = frozenset({S.ACKNOWLEDGING, S.LEAVING, S.JOINING})


class IllegalStateTransition(RuntimeError):
    """AbstractMembershipManager.transitionTo's IllegalStateException."""


# ---------------------------------------------------------------------------- LocalAssignment

#: An assignment by topic id: ((topic id, (partition, ...)), ...), sorted.
TopicIdAssignment = tuple[tuple[Uuid, tuple[int, ...]], ...]


def to_assignment(partitions: Mapping[Uuid, Sequence[int]]) -> TopicIdAssignment:
    return tuple(sorted((t, tuple(sorted(set(ps)))) for t, ps in partitions.items()))


@frozen
class LocalAssignment:
    """AbstractMembershipManager.LocalAssignment: partitions by topic id, and the local epoch
    that every new target assignment bumps (so an equal assignment received again after a
    different one is acknowledged again)."""

    local_epoch: int
    partitions: TopicIdAssignment = ()

    @property
    def is_none(self) -> bool:
        return self.local_epoch == NONE_EPOCH

    def update_with(self, assignment: TopicIdAssignment) -> LocalAssignment | None:
        """updateWith: None if it is the same assignment, else the next local epoch's."""
        if self.local_epoch != NONE_EPOCH and assignment == self.partitions:
            return None
        return LocalAssignment(self.local_epoch + 1, assignment)


NONE_EPOCH = -1
NO_ASSIGNMENT = LocalAssignment(NONE_EPOCH)


# ---------------------------------------------------------------------- HeartbeatRequestState


class HeartbeatRequestState:
    """AbstractHeartbeatRequestManager.HeartbeatRequestState (over RequestState): whether a
    heartbeat may go out now. The heartbeat timer runs the interval the broker sent from the last
    send; after a failure it is reset to 0 and the exponential backoff decides.

    Kafka builds its backoff with ``maxPollIntervalMs`` in the ``jitter`` position
    (AbstractHeartbeatRequestManager's constructor), so the random factor is drawn from
    [1 - 300000, 1 + 300000]: each backoff is either negative (no wait) or capped at
    ``retry.backoff.max.ms``. The simulator draws it the same way, from the consumer's seeded
    random source.
    """

    def __init__(self, backoff: ExponentialBackoff) -> None:
        self.backoff = backoff
        self.heartbeat_interval_ms = 0
        #: The heartbeat timer expires then (Timer.reset(interval) at each send).
        self.timer_deadline = 0
        self.request_in_flight = False
        self.last_received_ms = -1
        self.num_attempts = 0
        self.backoff_ms = 0

    def reset(self) -> None:
        """RequestState.reset: no wait, nothing in flight."""
        self.request_in_flight = False
        self.last_received_ms = -1
        self.num_attempts = 0
        self.backoff_ms = self.backoff.backoff(0)

    def remaining_backoff_ms(self, now: int) -> int:
        return max(0, self.backoff_ms - (now - self.last_received_ms))

    def can_send_request(self, now: int) -> bool:
        return (
            now >= self.timer_deadline
            and not self.request_in_flight
            and self.remaining_backoff_ms(now) <= 0
        )

    def time_to_next_heartbeat_ms(self, now: int) -> int:
        if now >= self.timer_deadline:
            return self.remaining_backoff_ms(now)
        return self.timer_deadline - now

    def on_send_attempt(self, now: int) -> None:
        self.request_in_flight = True

    def reset_timer(self, now: int) -> None:
        self.timer_deadline = now + self.heartbeat_interval_ms

    def on_successful_attempt(self, now: int) -> None:
        self.request_in_flight = False
        self.last_received_ms = now
        self.backoff_ms = self.backoff.backoff(0)
        self.num_attempts = 0

    def on_failed_attempt(self, now: int) -> None:
        """Reset the timer to 0 (a next heartbeat may go out without waiting the interval), then
        RequestState.onFailedAttempt: the backoff of this many failures."""
        self.timer_deadline = now
        self.request_in_flight = False
        self.last_received_ms = now
        self.backoff_ms = self.backoff.backoff(self.num_attempts)
        self.num_attempts += 1

    def update_heartbeat_interval_ms(self, interval: int, now: int) -> None:
        """updateHeartbeatIntervalMs: a changed interval restarts the timer from now."""
        if interval == self.heartbeat_interval_ms:
            return
        self.heartbeat_interval_ms = interval
        self.timer_deadline = now + interval


# ----------------------------------------------------------------------------- HeartbeatState


class SentFields:
    """ConsumerHeartbeatRequestManager.HeartbeatState.SentFields: what the last heartbeat sent."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.rebalance_timeout_ms = -1
        self.subscribed_topic_names: tuple[str, ...] | None = None
        self.server_assignor: str | None = None
        self.local_assignment: LocalAssignment | None = None


# ------------------------------------------------------------------------------- the manager


class Reaction(Enum):
    """What onErrorResponse does with a ConsumerGroupHeartbeat error."""

    #: markCoordinatorUnknown, and no backoff: the next heartbeat goes to the new coordinator.
    COORDINATOR_UNKNOWN = "coordinator unknown"
    #: Back off and retry.
    RETRY = "retry"
    #: transitionToFenced, no backoff: release the assignment and rejoin at epoch 0.
    FENCED = "fenced"
    #: handleFatalFailure: transitionToFatal, the error reaches the application.
    FATAL = "fatal"


#: AbstractHeartbeatRequestManager.onErrorResponse (+ ConsumerHeartbeatRequestManager's
#: handleSpecificError: UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID); any other error is fatal.
HEARTBEAT_ERRORS: dict[Errors, Reaction] = {
    Errors.NOT_COORDINATOR: Reaction.COORDINATOR_UNKNOWN,
    Errors.COORDINATOR_NOT_AVAILABLE: Reaction.COORDINATOR_UNKNOWN,
    Errors.COORDINATOR_LOAD_IN_PROGRESS: Reaction.RETRY,
    Errors.GROUP_AUTHORIZATION_FAILED: Reaction.FATAL,
    Errors.INVALID_REQUEST: Reaction.FATAL,
    Errors.GROUP_MAX_SIZE_REACHED: Reaction.FATAL,
    Errors.UNSUPPORTED_ASSIGNOR: Reaction.FATAL,
    Errors.UNSUPPORTED_VERSION: Reaction.FATAL,
    Errors.FENCED_MEMBER_EPOCH: Reaction.FENCED,
    Errors.UNKNOWN_MEMBER_ID: Reaction.FENCED,
    Errors.UNRELEASED_INSTANCE_ID: Reaction.FATAL,
    Errors.FENCED_INSTANCE_ID: Reaction.FATAL,
}

#: UNSUPPORTED_VERSION's message (onErrorResponse).
UNSUPPORTED_VERSION_MESSAGE = (
    "The cluster doesn't yet support the new consumer group protocol. Set group.protocol=classic "
    "to revert to the classic protocol until the cluster is upgraded."
)


class ConsumerMembershipManager:
    """ConsumerMembershipManager + ConsumerHeartbeatRequestManager for ``group.protocol=consumer``,
    one per incarnation. ``host`` is the ``Consumer`` facade: the coordinator lookup, the network
    client, the timers, offsets, the listener callbacks and the event log."""

    def __init__(self, host: ConsumerProtocolHost) -> None:
        self._c = host
        config = host.config
        self.group_id = config.group_id
        self.group_instance_id = config.group_instance_id
        self.server_assignor = config.group_remote_assignor
        #: HeartbeatState uses max.poll.interval.ms as the rebalance timeout.
        self.rebalance_timeout_ms = config.max_poll_interval_ms
        self.max_poll_interval_ms = config.max_poll_interval_ms
        self._state = S.UNSUBSCRIBED
        self._member_id = ""
        self.member_epoch = 0
        self.current_assignment = NO_ASSIGNMENT
        self.target_assignment = NO_ASSIGNMENT
        #: assignedTopicNamesCache
        self._names_cache: dict[Uuid, str] = {}
        self.reconciliation_in_progress = False
        self._rejoined_while_reconciling = False
        self._leave_in_progress = False
        self._poll_timer_expired = False
        self._subscription_updated = True  # subscribe() before the first poll()
        self._fatal: ConsumerFatal | None = None
        #: ``join`` is running (re-entered through an acknowledgement: run it once more).
        self._in_join = False
        self._join_again = False
        self._stopped = False
        #: The reconciliation under way: its commit, the partitions, its deadline.
        self._reconcile: _Reconciliation | None = None
        #: A stale member's onPartitionsLost, waiting for the application thread.
        self._stale_release_pending = False
        self._stale_released = False
        #: A fenced member's onPartitionsLost, waiting for the application thread.
        self._fenced_release_pending = False
        self.poll_deadline_ms = 0
        backoff = ExponentialBackoff(
            config.retry_backoff_ms,
            config.retry_backoff_max_ms,
            host._rng,
            jitter=float(config.max_poll_interval_ms),
        )
        self.request_state = HeartbeatRequestState(backoff)
        self.sent = SentFields()

    # ------------------------------------------------------------------ MembershipManager

    @property
    def generation(self) -> Generation:
        """The member id and epoch, as the facade's commits and callbacks read them."""
        return Generation(self.member_epoch, self._member_id, None)

    @generation.setter
    def generation(self, value: Generation) -> None:
        self._member_id = value.member_id
        self.member_epoch = value.generation_id

    @property
    def commit_generation(self) -> Generation:
        """The member id and epoch an OffsetCommit carries: CommitRequestManager's memberInfo,
        which onMemberEpochUpdated fills only while the epoch is positive."""
        if self.member_epoch > 0:
            return Generation(self.member_epoch, self._member_id, None)
        return NO_GENERATION

    def local_commit_error(self) -> str | None:
        """A KIP-848 member commits in any state (the coordinator checks the epoch)."""
        return None

    @property
    def state(self) -> str:
        return self._state._value_

    @property
    def member_state(self) -> ConsumerMemberState:
        return self._state

    @property
    def member_id(self) -> str:
        return self._member_id

    @property
    def generation_id(self) -> int:
        return self.member_epoch

    @property
    def in_group(self) -> bool:
        return self.member_epoch > 0 and self._state not in NOT_IN_GROUP

    @property
    def rejoin_needed(self) -> bool:
        return False

    @property
    def join_in_progress(self) -> bool:
        return False

    @property
    def fatal(self) -> ConsumerFatal | None:
        return self._fatal

    def join(self, step: ConsumerStep, now: int) -> None:
        """What the application thread does in poll() for the group: onConsumerPoll (join when
        the subscription changed and the member is UNSUBSCRIBED), finish releasing a fenced or
        stale member's assignment (onPartitionsLost), and reconcile (maybeReconcile). Kafka's
        background thread reconciles on each of its loops; here a pass that ends RECONCILING
        again (the acknowledgement went out and a newer target waits) runs once more."""
        if self._in_join:
            self._join_again = True  # asked again from inside (an acknowledgement went out)
            return
        self._in_join = True
        try:
            for _ in range(8):
                self._join_again = False
                self._join_pass(step, now)
                if not self._join_again:
                    break
        finally:
            self._in_join = False

    def _join_pass(self, step: ConsumerStep, now: int) -> None:
        if self._c.lookup.coordinator is None and self._state is not S.FATAL:
            self._c._lookup_coordinator(step, now)
        if self._subscription_updated and self._state is S.UNSUBSCRIBED:
            self._subscription_updated = False
            self.transition_to_joining(step, now)
        if self._fenced_release_pending:
            self._finish_fenced_release(step, now)
        if self._stale_release_pending:
            self._finish_stale_release(step, now)
        if self._state is S.RECONCILING:
            self.maybe_reconcile(step, now)
        self._maybe_heartbeat(step, now)

    def leave(self, step: ConsumerStep, reason: str, now: int, *, static_too: bool = False) -> None:
        """AbstractMembershipManager.leaveGroup: PREPARE_LEAVING, release the assignment
        (signalMemberLeavingGroup), clear it, then LEAVING: a heartbeat with epoch -1 (-2 for a
        static member) goes out at once. A member out of the group sends nothing (a fenced one
        drops its assignment and is UNSUBSCRIBED)."""
        step.event(
            "leave_group",
            t_ms=now,
            reason=reason,
            sent=self._state not in NOT_IN_GROUP
            and self._state not in (S.PREPARE_LEAVING, S.LEAVING)
            and self._c.lookup.coordinator is not None,
            member_id=self._member_id,
            group_instance_id=self.group_instance_id,
        )
        if self._state in NOT_IN_GROUP:
            if self._state is S.FENCED:
                self._fenced_release_pending = False
                self._clear_assignment(now)
                self.transition_to(step, S.UNSUBSCRIBED, now, reason)
            return
        if self._state in (S.PREPARE_LEAVING, S.LEAVING):
            return
        self.transition_to(step, S.PREPARE_LEAVING, now, reason)
        self._leave_in_progress = True
        self._release_assignment_to_leave(step, now)
        self._clear_assignment(now)
        self.transition_to_sending_leave_group(step, False, now, reason)
        self._maybe_heartbeat(step, now)

    def _release_assignment_to_leave(self, step: ConsumerStep, now: int) -> None:
        """invokeOnPartitionsRevokedOrLostToReleaseAssignment: onPartitionsRevoked while in the
        group (epoch > 0), onPartitionsLost otherwise; nothing without partitions."""
        owned = sorted(self._c.fetch.owned)
        if owned:
            self._c._invoke(step, "revoked" if self.member_epoch > 0 else "lost", owned, now)

    def release_assignment(self, step: ConsumerStep, now: int) -> None:
        """Nothing: ``leave`` releases the assignment after PREPARE_LEAVING, as leaveGroup
        does."""

    def request_rejoin(self, step: ConsumerStep, reason: str, now: int) -> None:
        """Nothing: a KIP-848 member's assignment changes come from the coordinator."""

    def request_rejoin_if_necessary(self, step: ConsumerStep, reason: str, now: int) -> None:
        """Nothing (see ``request_rejoin``)."""

    def reset_state_and_rejoin(
        self, step: ConsumerStep, reason: str, reset_member_id: bool, now: int
    ) -> None:
        """Nothing: an OffsetCommit answered UNKNOWN_MEMBER_ID fails with CommitFailedException;
        the heartbeat finds out about the membership (CommitRequestManager)."""

    def on_subscription_changed(self, step: ConsumerStep, now: int) -> None:
        """onSubscriptionUpdated: the next poll() joins an UNSUBSCRIBED member, and the next
        heartbeat carries the new topics."""
        self._subscription_updated = True
        self._maybe_heartbeat(step, now)

    def on_poll(self, step: ConsumerStep, now: int) -> None:
        """AbstractHeartbeatRequestManager.resetPollTimer: a stale member rejoins."""
        if now >= self.poll_deadline_ms and self._poll_timer_expired:
            self.maybe_rejoin_stale_member(step, now)
        self.poll_deadline_ms = now + self.max_poll_interval_ms

    def on_coordinator_found(self, now: int) -> None:
        """Nothing yet: the facade's ``schedule_heartbeat`` follows, after it logged the
        coordinator."""

    def schedule_heartbeat(self, step: ConsumerStep, now: int) -> None:
        self._maybe_heartbeat(step, now)

    def stop(self) -> None:
        self._stopped = True

    def on_response(
        self, step: ConsumerStep, entry: InFlightRequest, message: object, now: int
    ) -> None:
        assert isinstance(message, ConsumerGroupHeartbeatResponse)
        if entry.ignore_response:
            return  # the poll-timeout leave: "We can ignore the leave response"
        if message.error_code == Errors.NONE:
            rs = self.request_state
            rs.update_heartbeat_interval_ms(message.heartbeat_interval_ms, now)
            rs.on_successful_attempt(now)
            self.on_heartbeat_success(step, message, now)
        else:
            self._on_error_response(step, message, now)
        self._c._maybe_drive(step, now)
        self._maybe_heartbeat(step, now)

    def on_request_failed(
        self, step: ConsumerStep, entry: InFlightRequest, now: int, reason: str
    ) -> None:
        """onFailure with a retriable (disconnect) exception: back off; the facade has marked
        the coordinator unknown (handleCoordinatorDisconnect)."""
        if entry.ignore_response:
            return
        self.request_state.on_failed_attempt(now)
        self.sent.reset()
        self.on_heartbeat_failure(now)
        self._maybe_heartbeat(step, now)

    def on_timer(self, step: ConsumerStep, now: int) -> None:
        self._maybe_heartbeat(step, now)

    def send_sync_group(
        self, step: ConsumerStep, assignments: tuple[SyncGroupRequestAssignment, ...], now: int
    ) -> None:
        raise IllegalStateTransition("a KIP-848 member has no client-side assignment")

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
        raise IllegalStateTransition("a KIP-848 member has no client-side assignment")

    # ------------------------------------------------------------------ the state machine

    def transition_to(
        self, step: ConsumerStep, new: ConsumerMemberState, now: int, reason: str = ""
    ) -> None:
        """AbstractMembershipManager.transitionTo: only along ``PREVIOUS_VALID_STATES``."""
        old = self._state
        if new is not old and old not in PREVIOUS_VALID_STATES[new]:
            raise IllegalStateTransition(f"Invalid state transition from {old} to {new}")
        self._state = new
        if new is not old:
            step.event(
                "client_state",
                t_ms=now,
                state_from=old._value_,
                state_to=new._value_,
                member_id=self._member_id,
                generation_id=self.member_epoch,
                reason=reason,
            )

    def transition_to_joining(self, step: ConsumerStep, now: int) -> None:
        if self._state is S.FATAL:
            return
        if self.reconciliation_in_progress:
            self._rejoined_while_reconciling = True
        self._reset_epoch(step, now)
        self.transition_to(step, S.JOINING, now, "join")
        self._clear_pending_assignments()

    def transition_to_fenced(self, step: ConsumerStep, now: int, reason: str) -> None:
        """transitionToFenced: release the assignment (onPartitionsLost, on the application
        thread), then rejoin at epoch 0."""
        if self._state is S.PREPARE_LEAVING:
            self.transition_to_sending_leave_group(step, False, now, reason)
            self.transition_to(step, S.UNSUBSCRIBED, now, reason)
            self._leave_in_progress = False
            return
        if self._state is S.LEAVING:
            self.transition_to(step, S.UNSUBSCRIBED, now, reason)
            self._leave_in_progress = False
            return
        if self._state is S.UNSUBSCRIBED:
            return
        self.transition_to(step, S.FENCED, now, reason)
        self._reset_epoch(step, now)
        self._fenced_release_pending = True
        self._c._maybe_drive(step, now)

    def _finish_fenced_release(self, step: ConsumerStep, now: int) -> None:
        self._fenced_release_pending = False
        self._signal_partitions_lost(step, now)
        self._clear_assignment(now)
        if self._state is S.FENCED:
            self.transition_to_joining(step, now)

    def transition_to_fatal(
        self, step: ConsumerStep, error: Errors, message: str, now: int
    ) -> None:
        previous = self._state
        self.transition_to(step, S.FATAL, now, message)
        self._fatal = ConsumerFatal(error.name, message)
        if previous in (S.UNSUBSCRIBED, S.LEAVING, S.PREPARE_LEAVING):
            self._leave_in_progress = False
            return
        # onPartitionsLost would run from the application's poll(), which throws the error
        # first in the simulator (the application stops): the facade's fatal path.

    def transition_to_sending_leave_group(
        self, step: ConsumerStep, due_to_expired_poll_timer: bool, now: int, reason: str
    ) -> None:
        if self._state in (S.FATAL, S.UNSUBSCRIBED):
            return
        if due_to_expired_poll_timer:
            self._poll_timer_expired = True
            self.transition_to(step, S.PREPARE_LEAVING, now, reason)
        self._update_member_epoch(
            step,
            LEAVE_GROUP_STATIC_MEMBER_EPOCH
            if self.group_instance_id is not None
            else LEAVE_GROUP_MEMBER_EPOCH,
            now,
        )
        self.current_assignment = NO_ASSIGNMENT
        self.transition_to(step, S.LEAVING, now, reason)

    def maybe_rejoin_stale_member(self, step: ConsumerStep, now: int) -> None:
        self._poll_timer_expired = False
        if self._state is S.STALE:
            if self._stale_release_pending:
                self._finish_stale_release(step, now)
            self.transition_to_joining(step, now)

    def _transition_to_stale(self, step: ConsumerStep, now: int) -> None:
        self.transition_to(step, S.STALE, now, "consumer poll timeout has expired.")
        self._stale_release_pending = True

    def _finish_stale_release(self, step: ConsumerStep, now: int) -> None:
        self._stale_release_pending = False
        self._signal_partitions_lost(step, now)
        self._clear_assignment(now)

    def _reset_epoch(self, step: ConsumerStep, now: int) -> None:
        self._update_member_epoch(step, JOIN_GROUP_MEMBER_EPOCH, now)

    def _update_member_epoch(self, step: ConsumerStep, epoch: int, now: int) -> None:
        """updateMemberEpoch: a changed epoch is logged (Kafka's notifyEpochChange)."""
        previous = self.member_epoch
        self.member_epoch = epoch
        if epoch != previous:
            step.event(
                "member_epoch_updated",
                t_ms=now,
                member_id=self._member_id,
                generation_id=epoch,
                previous_epoch=previous,
            )

    def _clear_pending_assignments(self) -> None:
        self.target_assignment = NO_ASSIGNMENT
        self._names_cache.clear()

    def _clear_assignment(self, now: int) -> None:
        if self._c.fetch.owned:
            self._c.fetch.set_owned([], now)
        self.current_assignment = NO_ASSIGNMENT
        self._clear_pending_assignments()

    def _signal_partitions_lost(self, step: ConsumerStep, now: int) -> None:
        owned = sorted(self._c.fetch.owned)
        if owned:
            self._c._invoke(step, "lost", owned, now)

    # ------------------------------------------------------------------ heartbeats

    def _maybe_heartbeat(self, step: ConsumerStep, now: int) -> None:
        """AbstractHeartbeatRequestManager.poll: skip, leave on an expired poll timer, send now
        (joining, acknowledging, leaving) or on the interval; else plan the next wake-up."""
        c = self._c
        if c.status not in (ConsumerStatus.RUNNING, ConsumerStatus.CLOSING):
            return
        if c.lookup.coordinator is None or self._state in SKIP_HEARTBEAT:
            self._on_heartbeat_request_skipped(step, now)
            return
        rs = self.request_state
        if (
            self._poll_timeout_possible(now)
            and now >= self.poll_deadline_ms
            and self._state not in (S.PREPARE_LEAVING, S.LEAVING)
        ):
            step.event(
                "poll_timeout",
                t_ms=now,
                member_id=self._member_id,
                max_poll_interval_ms=self.max_poll_interval_ms,
            )
            self.transition_to_sending_leave_group(
                step, True, now, "consumer poll timeout has expired."
            )
            self._send_heartbeat(step, now, ignore_response=True)
            rs.reset()
            self.sent.reset()
            self._plan(step, now + rs.heartbeat_interval_ms, now)
            return
        heartbeat_now = self._state is S.LEAVING or (
            self._state in HEARTBEAT_NOW and not rs.request_in_flight
        )
        if not rs.can_send_request(now) and not heartbeat_now:
            if not rs.request_in_flight:
                self._plan(step, now + rs.time_to_next_heartbeat_ms(now), now)
            else:
                self._plan_poll_timeout(step, now)
            return
        self._send_heartbeat(step, now, ignore_response=False)
        self._plan(step, now + rs.heartbeat_interval_ms, now)

    def _poll_timeout_possible(self, now: int) -> bool:
        return self._c.app.poll_timeout_possible(now, self.poll_deadline_ms)

    def _plan_poll_timeout(self, step: ConsumerStep, now: int) -> None:
        if self._poll_timeout_possible(now):
            self._plan(step, self.poll_deadline_ms, now)

    def _plan(self, step: ConsumerStep, at: int, now: int) -> None:
        """One heartbeat wake-up: the next heartbeat or the poll timer, whichever is first."""
        if self._poll_timeout_possible(now) and self._state not in (S.PREPARE_LEAVING, S.LEAVING):
            at = min(at, self.poll_deadline_ms)
        at = max(at, now)
        timers = self._c._timers
        if timers.deadline(HeartbeatTimer) == at:
            return
        step.effects.append(timers.set(HeartbeatTimer, at))

    def _on_heartbeat_request_skipped(self, step: ConsumerStep, now: int) -> None:
        if self._state is S.LEAVING:
            self.transition_to(step, S.UNSUBSCRIBED, now, "leave heartbeat cannot be sent")
            self._leave_in_progress = False

    def _send_heartbeat(self, step: ConsumerStep, now: int, *, ignore_response: bool) -> None:
        """makeHeartbeatRequest: build it (HeartbeatState), count the attempt, tell the state
        machine (onHeartbeatRequestGenerated), restart the heartbeat timer."""
        request = self.build_request()
        rs = self.request_state
        coordinator = self._c.lookup.coordinator
        assert coordinator is not None
        corr = self._c._send(
            step,
            coordinator,
            request,
            now,
            member_id=request.member_id,
            generation_id=request.member_epoch,
            group_instance_id=request.instance_id,
        )
        self._c.network.mark_ignore_response(corr, ignore_response)
        rs.on_send_attempt(now)
        self._on_heartbeat_request_generated(step, now)
        rs.reset_timer(now)

    def build_request(self) -> ConsumerGroupHeartbeatRequest:
        """HeartbeatState.buildRequestData: group id, member id and epoch always; the rest when
        joining or when changed since the last heartbeat (SentFields)."""
        sent = self.sent
        send_all = self._state is S.JOINING
        rebalance_timeout = -1
        if send_all or sent.rebalance_timeout_ms != self.rebalance_timeout_ms:
            rebalance_timeout = self.rebalance_timeout_ms
            sent.rebalance_timeout_ms = rebalance_timeout
        topics: tuple[str, ...] | None = None
        subscribed = tuple(sorted(self._c.subscription))
        if send_all or subscribed != sent.subscribed_topic_names:
            topics = subscribed
            sent.subscribed_topic_names = subscribed
        assignor: str | None = None
        if self.server_assignor is not None and (
            send_all or self.server_assignor != sent.server_assignor
        ):
            assignor = self.server_assignor
            sent.server_assignor = assignor
        owned: tuple[ConsumerGroupHeartbeatTopicPartitions, ...] | None = None
        local = self.current_assignment
        if send_all or local != sent.local_assignment:
            owned = tuple(
                ConsumerGroupHeartbeatTopicPartitions(topic_id, parts)
                for topic_id, parts in local.partitions
            )
            sent.local_assignment = local
        return ConsumerGroupHeartbeatRequest(
            group_id=self.group_id,
            member_id=self._member_id,
            member_epoch=self.member_epoch,
            instance_id=self.group_instance_id,
            rebalance_timeout_ms=rebalance_timeout,
            subscribed_topic_names=topics,
            server_assignor=assignor,
            topic_partitions=owned,
            client_id=self._c.config.client_id,
        )

    def _on_heartbeat_request_generated(self, step: ConsumerStep, now: int) -> None:
        if self._state is S.ACKNOWLEDGING:
            if self._target_reconciled():
                self.transition_to(step, S.STABLE, now, "assignment acknowledged")
            else:
                self.transition_to(step, S.RECONCILING, now, "new assignment to reconcile")
                self._c._maybe_drive(step, now)  # the background thread reconciles on its next loop
        elif self._state is S.LEAVING:
            if self._poll_timer_expired:
                self._transition_to_stale(step, now)
            else:
                self.transition_to(step, S.UNSUBSCRIBED, now, "left the group")

    def on_heartbeat_success(
        self, step: ConsumerStep, response: ConsumerGroupHeartbeatResponse, now: int
    ) -> None:
        """ConsumerMembershipManager.onHeartbeatSuccess."""
        state = self._state
        if state is S.LEAVING:
            return
        if state is S.UNSUBSCRIBED and self._leave_in_progress:
            self._leave_in_progress = False
            return
        if state in NOT_IN_GROUP:
            return
        if response.member_id is not None:
            self._member_id = response.member_id
        self._update_member_epoch(step, response.member_epoch, now)
        assignment = response.assignment
        if assignment is None:
            return
        if not state.can_handle_new_assignment:
            return
        target = to_assignment({tp.topic_id: tp.partitions for tp in assignment.topic_partitions})
        step.event(
            "assignment_received",
            t_ms=now,
            partitions=self._describe(target),
            generation_id=self.member_epoch,
            member_id=self._member_id,
        )
        self._process_assignment_received(step, target, now)

    def on_heartbeat_failure(self, now: int) -> None:
        if self._state is S.UNSUBSCRIBED and self._leave_in_progress:
            self._leave_in_progress = False

    def _on_error_response(
        self, step: ConsumerStep, response: ConsumerGroupHeartbeatResponse, now: int
    ) -> None:
        """AbstractHeartbeatRequestManager.onErrorResponse, by ``HEARTBEAT_ERRORS``."""
        error = response.error_code
        rs = self.request_state
        self.sent.reset()
        rs.on_failed_attempt(now)
        self.on_heartbeat_failure(now)
        reaction = HEARTBEAT_ERRORS.get(error, Reaction.FATAL)
        if reaction is Reaction.COORDINATOR_UNKNOWN:
            self._c._mark_coordinator_unknown(step, f"error response {error.name}", now)
            rs.reset()
        elif reaction is Reaction.FENCED:
            self.transition_to_fenced(step, now, f"encountered {error.name} from heartbeat")
            rs.reset()
        elif reaction is Reaction.FATAL:
            if error == Errors.UNSUPPORTED_VERSION:
                message = UNSUPPORTED_VERSION_MESSAGE
            else:
                message = response.error_message or f"ConsumerGroupHeartbeat failed: {error.name}"
            self.transition_to_fatal(step, error, message, now)
            self._c._maybe_drive(step, now)  # poll() throws it

    # ------------------------------------------------------------------ reconciliation

    def _target_reconciled(self) -> bool:
        return self.current_assignment == self.target_assignment

    def _process_assignment_received(
        self, step: ConsumerStep, target: TopicIdAssignment, now: int
    ) -> None:
        updated = self.target_assignment.update_with(target)
        if updated is not None:
            self.target_assignment = updated
        if not self._target_reconciled():
            self.transition_to(step, S.RECONCILING, now, "new target assignment")
        elif self._state in (S.RECONCILING, S.JOINING):
            self.transition_to(step, S.STABLE, now, "target assignment already reconciled")

    def _topic_name(self, topic_id: Uuid) -> str | None:
        name = self._c._md.topic_names.get(topic_id)
        if name is not None:
            self._names_cache[topic_id] = name
            return name
        return self._names_cache.get(topic_id)

    def _describe(self, assignment: TopicIdAssignment) -> list[str]:
        out: list[str] = []
        for topic_id, parts in assignment:
            name = self._topic_name(topic_id) or str(topic_id)
            out.extend(str(TopicPartition(name, p)) for p in parts)
        return sorted(out)

    def maybe_reconcile(self, step: ConsumerStep, now: int) -> None:
        """AbstractMembershipManager.maybeReconcile: resolve topic ids, commit (auto-commit),
        revoke, assign, then ACKNOWLEDGING. Runs on the application thread here; a commit in
        flight makes it wait."""
        if self._reconcile is not None:
            self._continue_reconciliation(step, now)
            return
        if self._target_reconciled() or self.reconciliation_in_progress:
            return
        resolved: list[tuple[Uuid, str, int]] = []
        unresolved = False
        for topic_id, parts in self.target_assignment.partitions:
            name = self._topic_name(topic_id)
            if name is None:
                unresolved = True
                continue
            resolved.extend((topic_id, name, p) for p in parts)
        if unresolved:
            # findResolvableAssignmentAndTriggerMetadataUpdate: metadata.requestUpdate(true)
            self._c._md.request_update(True)
            self._c._maybe_update_metadata(step, now)
        by_id: dict[Uuid, list[int]] = {}
        for topic_id, _name, p in resolved:
            by_id.setdefault(topic_id, []).append(p)
        local = LocalAssignment(self.target_assignment.local_epoch, to_assignment(by_id))
        if not self.current_assignment.is_none and local.partitions == (
            self.current_assignment.partitions
        ):
            self.current_assignment = local
            self.transition_to(
                step, S.ACKNOWLEDGING, now, "partially resolved assignment unchanged"
            )
            return
        self.reconciliation_in_progress = True
        self._rejoined_while_reconciling = False
        assigned = sorted({TopicPartition(name, p) for _t, name, p in resolved})
        owned = set(self._c.fetch.owned)
        added = sorted(set(assigned) - owned)
        revoked = sorted(owned - set(assigned))
        step.event(
            "reconciliation_started",
            t_ms=now,
            local_epoch=local.local_epoch,
            member_id=self._member_id,
            generation_id=self.member_epoch,
            assigned=[str(tp) for tp in assigned],
            owned=[str(tp) for tp in sorted(owned)],
            added=[str(tp) for tp in added],
            revoked=[str(tp) for tp in revoked],
        )
        rec = _Reconciliation(local, assigned, added, revoked, now + self.rebalance_timeout_ms)
        self._reconcile = rec
        self._start_commit(step, rec, now)
        self._continue_reconciliation(step, now)

    def _start_commit(self, step: ConsumerStep, rec: _Reconciliation, now: int) -> None:
        """maybeAutoCommitSyncBeforeRevocation: with auto-commit, commit the consumed offsets,
        retried (latest offsets, backoff) on retriable errors and STALE_MEMBER_EPOCH until the
        rebalance timeout; UNKNOWN_TOPIC_OR_PARTITION and other errors end it."""
        if not self._c.config.enable_auto_commit:
            rec.commit = None
            return
        self._c.fetch.materialize(now)
        rec.commit = self._c._commit(step, self._c._all_consumed(), RECONCILE_COMMIT, now)

    def _continue_reconciliation(self, step: ConsumerStep, now: int) -> None:
        rec = self._reconcile
        assert rec is not None
        op = rec.commit
        if op is not None:
            if not op.done:
                return
            if op.error is not None and now < rec.deadline_ms and _retry_reconcile_commit(op):
                if rec.retry_at is None:
                    rec.retry_at = now + self._c._backoff.backoff(rec.attempts)
                    rec.attempts += 1
                    step.effects.append(self._c._timers.set(JoinRetryTimer, rec.retry_at))
                    return
                if now < rec.retry_at:
                    return
                rec.retry_at = None
                self._start_commit(step, rec, now)
                self._continue_reconciliation(step, now)
                return
        self._reconcile = None
        if self._maybe_abort_reconciliation():
            return
        if rec.revoked:
            # revokePartitions: only those still assigned; onPartitionsRevoked
            still = sorted(set(rec.revoked) & set(self._c.fetch.owned))
            if still:
                self._c._invoke(step, "revoked", still, now)
            self._c.fetch.set_owned(sorted(set(self._c.fetch.owned) - set(still)), now)
        if self._maybe_abort_reconciliation():
            return
        # assignPartitions: the new assignment, then onPartitionsAssigned (always, even empty)
        self._c.fetch.set_owned(rec.assigned, now)
        self._names_cache = {
            t: n for t, n in self._names_cache.items() if n in {tp.topic for tp in rec.assigned}
        }
        self._c._invoke(step, "assigned", rec.added, now)
        self._c.offset_lookup.restart()
        self._c._maybe_fetch_offsets(step, now)
        if self.reconciliation_in_progress and not self._maybe_abort_reconciliation():
            self.current_assignment = rec.local
            # signalReconciliationCompleting: CommitRequestManager.resetAutoCommitTimer
            if self._c.config.enable_auto_commit:
                self._c._next_auto_commit = now + self._c.config.auto_commit_interval_ms
            step.event(
                "reconciliation_completed",
                t_ms=now,
                local_epoch=rec.local.local_epoch,
                member_id=self._member_id,
                generation_id=self.member_epoch,
                partitions=[str(tp) for tp in rec.assigned],
            )
            self.transition_to(step, S.ACKNOWLEDGING, now, "reconciliation completed")
            self.reconciliation_in_progress = False
            self._rejoined_while_reconciling = False
        self._c._schedule_continuous_poll(step, now)

    def _maybe_abort_reconciliation(self) -> bool:
        abort = self._state is not S.RECONCILING or self._rejoined_while_reconciling
        if abort:
            self.reconciliation_in_progress = False
            self._rejoined_while_reconciling = False
        return abort


def _retry_reconcile_commit(op: CommitResult) -> bool:
    """autoCommitSyncBeforeRevocationWithRetries: retriable errors (not
    UNKNOWN_TOPIC_OR_PARTITION) and STALE_MEMBER_EPOCH are retried."""
    if op.error == Errors.UNKNOWN_TOPIC_OR_PARTITION.name:
        return False
    return op.retriable or op.error == Errors.STALE_MEMBER_EPOCH.name


class _Reconciliation:
    """One maybeReconcile run: what it assigns, adds and revokes, its commit and deadline."""

    __slots__ = (
        "added",
        "assigned",
        "attempts",
        "commit",
        "deadline_ms",
        "local",
        "retry_at",
        "revoked",
    )

    def __init__(
        self,
        local: LocalAssignment,
        assigned: list[TopicPartition],
        added: list[TopicPartition],
        revoked: list[TopicPartition],
        deadline_ms: int,
    ) -> None:
        self.local = local
        self.assigned = assigned
        self.added = added
        self.revoked = revoked
        self.deadline_ms = deadline_ms
        self.commit: CommitResult | None = None
        self.retry_at: int | None = None
        self.attempts = 0


__all__ = [
    "HEARTBEAT_ERRORS",
    "PREVIOUS_VALID_STATES",
    "ConsumerMemberState",
    "ConsumerMembershipManager",
    "HeartbeatRequestState",
    "LocalAssignment",
]
