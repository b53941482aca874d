"""The classic protocol's group membership: Kafka's ``AbstractCoordinator`` join / sync /
heartbeat / leave side, behind ``members.membership.MembershipManager``.

``ClassicMembershipManager`` owns the member's place in the group: its ``MemberState``, its
``Generation``, the rejoin flag and reason, ``needsJoinPrepare``, the combined JoinGroup +
SyncGroup future (``joinFuture``), and the heartbeat thread (``Heartbeat`` + ``HeartbeatThread``).
It runs ``joinGroupIfNeeded``, builds and sends JoinGroup / SyncGroup / Heartbeat / LeaveGroup,
and reacts to their answers by the ``JOIN_ERRORS`` table (members.membership).

What ``AbstractCoordinator`` leaves to its subclass stays with the ``Consumer`` facade, which
plays ``ConsumerCoordinator``: ``onJoinPrepare``, ``metadata()`` (the JoinGroup protocols),
``onLeaderElected`` (the leader's assignment), ``onJoinComplete``, ``rejoinNeededOrPending``'s
subscription and metadata checks, and the pattern subscriber's metadata refresh before a round.
The manager calls those hooks on its host, and sends requests, sets timers and logs events
through it, as the other parts' decisions go out through the facade; so the event order in the
log is the one the join loop always had.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from attrs import define

from coordinator.errors import EXCEPTION_NAMES, NO_ERROR, Errors, error_code_name
from coordinator.protocol import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    MemberIdentity,
    SyncGroupRequest,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
    maybe_truncate_reason,
)
from members.failure import ConsumerFatal
from members.heartbeat import Heartbeat
from members.membership import JOIN_GROUP, SYNC_GROUP, Action, Retry, join_reaction
from members.network import InFlightRequest
from members.state import (
    NO_GENERATION,
    STATE_COMPLETING_REBALANCE,
    STATE_PREPARING_REBALANCE,
    STATE_STABLE,
    STATE_UNJOINED,
    STATUS_RUNNING,
    Generation,
    MemberState,
)
from members.timers import HeartbeatTimer, JoinRetryTimer

# read on every answer: a module constant (why: coordinator.errors.NO_ERROR)
_NO_ACTION: Final = Action.NOTHING

if TYPE_CHECKING:
    from members.membership import ClassicMembershipHost
    from members.result import ConsumerStep

PROTOCOL_TYPE = "consumer"

#: How Kafka's log and rejoin reasons name an API (ApiKeys, upper case).
_API_LOG_NAMES = {JOIN_GROUP: "JOIN_GROUP", SYNC_GROUP: "SYNC_GROUP"}


@define
class JoinFuture:
    """The combined JoinGroup + SyncGroup future of AbstractCoordinator (``joinFuture``)."""

    done: bool = False
    error: Errors | None = None
    #: What joinGroupIfNeeded does with the failure (members.membership.Retry).
    retry: Retry = Retry.THROW
    reason: str = ""
    assignment: bytes = b""
    #: The simple name of the exception Kafka's future fails with (the rejoin reason names it).
    exception: str = ""


def java_generation(generation: Generation) -> str:
    """AbstractCoordinator.Generation.toString, as Kafka's log lines and reasons print it."""
    protocol = "null" if generation.protocol_name is None else generation.protocol_name
    return (
        f"Generation{{generationId={generation.generation_id}, "
        f"memberId='{generation.member_id}', protocol='{protocol}'}}"
    )


class ClassicMembershipManager:
    """AbstractCoordinator's membership for ``group.protocol=classic``, one per incarnation.

    ``host`` is the ``Consumer`` facade (Kafka's ``ConsumerCoordinator`` subclass): its hooks,
    the network client and the coordinator lookup, the timers and the event log.
    """

    def __init__(self, host: ClassicMembershipHost) -> None:
        self._c = host
        config = host.config
        # plain attributes, read on every poll (the MembershipManager protocol's properties)
        self.member_state: MemberState = STATE_UNJOINED
        self.generation: Generation = NO_GENERATION
        self.rejoin_needed = True
        self._rejoin_reason = ""
        self._needs_join_prepare = True
        self._join: JoinFuture | None = None
        self.heartbeat = Heartbeat(
            session_timeout_ms=config.session_timeout_ms,
            heartbeat_interval_ms=config.heartbeat_interval_ms,
            max_poll_interval_ms=config.max_poll_interval_ms,
            backoff=host._backoff,
        )

    # ------------------------------------------------------------------ MembershipManager

    @property
    def state(self) -> str:
        """The client MemberState name (UNJOINED / PREPARING_REBALANCE / ...)."""
        return self.member_state._value_  # .value without the enum property lookup

    @property
    def member_id(self) -> str:
        return self.generation.member_id

    @property
    def generation_id(self) -> int:
        return self.generation.generation_id

    @property
    def commit_generation(self) -> Generation:
        return self.generation

    def local_commit_error(self) -> str | None:
        """ConsumerCoordinator.sendOffsetCommitRequest outside STABLE: during a rebalance a
        RebalanceInProgressException, else a CommitFailedException."""
        if self.member_state is STATE_STABLE:
            return None
        if self.member_state in (
            STATE_PREPARING_REBALANCE,
            STATE_COMPLETING_REBALANCE,
        ):
            return "REBALANCE_IN_PROGRESS"
        return "COMMIT_FAILED"

    @property
    def in_group(self) -> bool:
        return not self.generation.is_reset

    def release_assignment(self, step: ConsumerStep, now: int) -> None:
        """ConsumerCoordinator.onLeavePrepare, on the facade."""
        self._c._on_leave_prepare(step, now)

    def on_subscription_changed(self, step: ConsumerStep, now: int) -> None:
        """Nothing: rejoinNeededOrPending compares the joined subscription."""

    @property
    def join_in_progress(self) -> bool:
        """AbstractCoordinator's ``joinFuture != null``: a round started and not yet consumed."""
        return self._join is not None

    @property
    def fatal(self) -> ConsumerFatal | None:
        """What the heartbeat thread failed with (thrown from the next poll())."""
        return self.heartbeat.failed

    def on_poll(self, step: ConsumerStep, now: int) -> None:
        """The application called poll(): Heartbeat.poll restarts max.poll.interval.ms."""
        self.heartbeat.poll(now)

    def on_coordinator_found(self, now: int) -> None:
        """lookupCoordinator succeeded: Heartbeat.resetSessionTimeout."""
        self.heartbeat.reset_session_timeout(now)

    def stop(self) -> None:
        """The application stops using the member (a fatal error, close()): the heartbeat
        thread stops (HeartbeatThread.disable / close)."""
        self.heartbeat.enabled = False

    def on_response(
        self, step: ConsumerStep, entry: InFlightRequest, message: object, now: int
    ) -> None:
        """An answer to one of the membership's requests (JoinGroup, SyncGroup, Heartbeat,
        LeaveGroup), to its AbstractCoordinator response handler."""
        _RESPONSE_HANDLERS[type(message)](self, step, entry, message, now)

    def on_request_failed(
        self, step: ConsumerStep, entry: InFlightRequest, now: int, reason: str
    ) -> None:
        """One of its requests was disconnected or timed out (a DisconnectException; the
        facade has marked the coordinator unknown first). Nothing waits on a LeaveGroup."""
        if entry.api in (JOIN_GROUP, SYNC_GROUP):
            self.fail_join(
                step,
                Errors.NETWORK_EXCEPTION,
                Retry.BACKOFF,
                now,
                reason,
                exception="DisconnectException",
            )
        elif entry.api == "Heartbeat":
            self._fail_heartbeat(step, now)

    # ------------------------------------------------------------------ AbstractCoordinator

    def _set_state(self, step: ConsumerStep, new: MemberState, now: int, reason: str) -> None:
        if new is self.member_state:
            return
        old = self.member_state
        self.member_state = new
        generation = self.generation
        step.events.append(  # step.event, spelled out: one of the most frequent events
            (
                "client_state",
                {
                    "t_ms": now,
                    "state_from": old._value_,  # .value without the enum property lookup
                    "state_to": new._value_,
                    "member_id": generation.member_id,
                    "generation_id": generation.generation_id,
                    "reason": reason,
                    "node": step.node,
                    "group_id": step.group_id,
                },
            )
        )

    def join(self, step: ConsumerStep, now: int) -> None:
        """AbstractCoordinator.joinGroupIfNeeded, one step at a time."""
        for _ in range(64):  # each pass sends a request or consumes a finished future
            if not self._c._rejoin_needed_or_pending(step, now):
                return
            if self._c.lookup.coordinator is None:
                self._c._lookup_coordinator(step, now)
                return
            if (
                self._c._pattern is not None
                and self._needs_join_prepare
                and not self._c._pattern_metadata_fresh(step, now)
            ):
                return  # a pattern consumer refreshes its metadata before each rebalance round
            retry_at = self._c._timers.deadlines.get(JoinRetryTimer)
            if retry_at is not None and now < retry_at:
                return
            if self._needs_join_prepare:
                self._needs_join_prepare = False
                if not self._c._on_join_prepare(step, now):
                    self._needs_join_prepare = True
                    return
            if self._join is None:
                self._initiate_join_group(step, now)
                return
            if not self._join.done:
                return
            result, self._join = self._join, None
            if result.error is None:
                if not self.generation.is_reset and self.member_state is STATE_STABLE:
                    self._c._on_join_complete(step, result.assignment, now)
                    self._needs_join_prepare = True
                else:
                    self.reset_state_and_rejoin(
                        step,
                        "rebalance failed since the generation/state was modified by heartbeat "
                        f"thread to {java_generation(self.generation)}/"
                        f"{self.member_state.name} before the rebalance callback triggered",
                        True,
                        now,
                    )
                continue
            assert result.error is not None
            if result.error is not Errors.MEMBER_ID_REQUIRED:
                # joinGroupIfNeeded: the short reason names the exception's class.
                self.request_rejoin(step, f"rebalance failed due to {result.exception}", now)
            if result.retry is Retry.THROW:
                raise ConsumerFatal(
                    result.error.name, result.reason or "JoinGroup/SyncGroup failed"
                )
            if result.retry is Retry.IMMEDIATE:
                continue
            step.effects.append(
                self._c._timers.set(JoinRetryTimer, now + self._c.config.retry_backoff_ms)
            )
            return

    def request_rejoin(self, step: ConsumerStep, reason: str, now: int) -> None:
        if not self.rejoin_needed:
            step.event("rejoin_requested", t_ms=now, reason=reason)
        self._rejoin_reason = reason
        self.rejoin_needed = True

    def request_rejoin_if_necessary(self, step: ConsumerStep, reason: str, now: int) -> None:
        if not self.rejoin_needed:
            self.request_rejoin(step, reason, now)

    def _reset_state_and_generation(
        self, step: ConsumerStep, reason: str, reset_member_id: bool, now: int
    ) -> None:
        step.event(
            "generation_reset",
            t_ms=now,
            reason=reason,
            reset_member_id=reset_member_id,
            member_id=self.generation.member_id,
            generation_id=self.generation.generation_id,
        )
        self.generation = (
            NO_GENERATION if reset_member_id else Generation(-1, self.generation.member_id, None)
        )
        self._set_state(step, STATE_UNJOINED, now, reason)
        self.heartbeat.enabled = False

    def reset_state_and_rejoin(
        self, step: ConsumerStep, reason: str, reset_member_id: bool, now: int
    ) -> None:
        self._reset_state_and_generation(step, reason, reset_member_id, now)
        self.request_rejoin(step, reason, now)
        self._needs_join_prepare = True

    def leave(self, step: ConsumerStep, reason: str, now: int, *, static_too: bool = False) -> None:
        """AbstractCoordinator.maybeLeaveGroup: only a dynamic member sends LeaveGroup, unless
        ``static_too`` (close() with ``static_leave_group_on_close``: librdkafka 1.6-1.7's
        close, Kafka 4.x's close(CloseOptions LEAVE_GROUP)), when a static member sends one
        naming its group.instance.id too, which removes it from the group at once."""
        sent = False
        if (
            (static_too or not self._c.is_static)
            and self._c.lookup.coordinator is not None
            and self.member_state is not STATE_UNJOINED
            and self.generation.has_member_id
        ):
            self._c._send(
                step,
                self._c.lookup.coordinator,
                LeaveGroupRequest(
                    group_id=self._c.config.group_id,
                    members=(
                        MemberIdentity(
                            member_id=self.generation.member_id,
                            group_instance_id=self._c.config.group_instance_id
                            if self._c.is_static
                            else None,
                            reason=maybe_truncate_reason(reason),
                        ),
                    ),
                ),
                now,
                member_id=self.generation.member_id,
            )
            sent = True
        step.event(
            "leave_group",
            t_ms=now,
            reason=reason,
            sent=sent,
            member_id=self.generation.member_id,
            group_instance_id=self._c.config.group_instance_id,
        )
        # resetGenerationOnLeaveGroup wipes the member id even when no LeaveGroup went out (a
        # static member), so the rejoin replaces the member's own slot (KAFKA-20985); the
        # proposed fix (apache/kafka#23266) keeps it then
        keep = not sent and self._c.config.keep_member_id_when_leave_suppressed
        self.reset_state_and_rejoin(step, "consumer pro-actively leaving the group", not keep, now)

    def _initiate_join_group(self, step: ConsumerStep, now: int) -> None:
        assert self._c.lookup.coordinator is not None
        self._set_state(step, STATE_PREPARING_REBALANCE, now, self._rejoin_reason or "join")
        self._join = JoinFuture()
        request = JoinGroupRequest(
            group_id=self._c.config.group_id,
            session_timeout_ms=self._c.config.session_timeout_ms,
            rebalance_timeout_ms=self._c.config.rebalance_timeout_ms,
            member_id=self.generation.member_id,
            protocol_type=PROTOCOL_TYPE,
            protocols=self._c._join_protocols(),
            group_instance_id=self._c.config.group_instance_id,
            reason=maybe_truncate_reason(self._rejoin_reason) or None,
            client_id=self._c.config.client_id,
        )
        self._c._send(
            step,
            self._c.lookup.coordinator,
            request,
            now,
            member_id=request.member_id,
            group_instance_id=request.group_instance_id,
            reason=request.reason,
        )

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
        """Fail the join future with ``error``; ``retry`` is what joinGroupIfNeeded then does,
        ``exception`` names the Java exception when it is not the error code's own (a
        disconnect, an unexpected error's KafkaException)."""
        if self._join is None or self._join.done:
            return
        self._join.done = True
        self._join.error = error
        self._join.reason = reason
        self._join.retry = retry
        self._join.exception = exception or EXCEPTION_NAMES.get(error, "KafkaException")
        self._c._maybe_drive(step, now)

    def _react_to_join_error(
        self,
        step: ConsumerStep,
        api: str,
        error: Errors,
        entry: InFlightRequest,
        now: int,
        member_id: str = "",
    ) -> None:
        """A JoinGroup or SyncGroup error answer, by the table (members.membership.JOIN_ERRORS):
        the action on the member, then the failed future. ``member_id`` is the one a JoinGroup
        answer gives (MEMBER_ID_REQUIRED)."""
        reaction = join_reaction(api, error)
        action = reaction.action
        if action is Action.ADOPT_MEMBER_ID:
            self.generation = Generation(-1, member_id, None)
            self.request_rejoin(step, f"need to re-join with the given member-id: {member_id}", now)
        elif action is Action.MARK_COORDINATOR_UNKNOWN:
            self._c._mark_coordinator_unknown(step, f"error response {error.name}", now)
        elif action is not _NO_ACTION and self._generation_unchanged(entry):
            self.reset_state_and_rejoin(
                step,
                f"encountered {error.name} from {_API_LOG_NAMES[api]} response",
                action is Action.RESET_GENERATION_AND_MEMBER_ID,
                now,
            )
        self.fail_join(
            step,
            error,
            reaction.retry,
            now,
            f"{api} failed: {error.name}",
            exception=reaction.exception,
        )

    def _generation_unchanged(self, entry: InFlightRequest) -> bool:
        return entry.sent_generation == self.generation

    def _on_join_group(
        self, step: ConsumerStep, entry: InFlightRequest, resp: JoinGroupResponse, now: int
    ) -> None:
        err = resp.error_code
        if self._join is None or self._join.done:
            return  # a stale answer (the join was abandoned)
        if err == NO_ERROR:
            if resp.protocol_type is not None and resp.protocol_type != PROTOCOL_TYPE:
                self.fail_join(
                    step,
                    Errors.INCONSISTENT_GROUP_PROTOCOL,
                    Retry.THROW,
                    now,
                    "protocol type mismatch",
                )
                return
            if self.member_state is not STATE_PREPARING_REBALANCE:
                # UnjoinedGroupException: retriable.
                self.fail_join(
                    step,
                    Errors.NETWORK_EXCEPTION,
                    Retry.BACKOFF,
                    now,
                    "unjoined group",
                    exception="UnjoinedGroupException",
                )
                return
            self.generation = Generation(resp.generation_id, resp.member_id, resp.protocol_name)
            self._set_state(step, STATE_COMPLETING_REBALANCE, now, "JoinGroup succeeded")
            self._enable_heartbeat(step, now)
            step.event(
                "joined",
                t_ms=now,
                member_id=resp.member_id,
                generation_id=resp.generation_id,
                protocol_name=resp.protocol_name,
                leader=resp.leader,
                is_leader=resp.member_id == resp.leader,
                members=len(resp.members),
                skip_assignment=resp.skip_assignment,
            )
            if resp.assignment is not None:
                # seed 004's design 2: the coordinator assigned; there is no SyncGroup round
                self._set_state(step, STATE_STABLE, now, "JoinGroup carried the assignment")
                self._rejoin_reason = ""
                self.rejoin_needed = False
                self._join.done = True
                self._join.assignment = resp.assignment
                self._c._maybe_drive(step, now)
            elif resp.member_id == resp.leader:
                self._c._on_leader_elected(step, resp, now)
            else:
                self.send_sync_group(step, (), now)
            return
        self._react_to_join_error(step, JOIN_GROUP, err, entry, now, resp.member_id)

    def send_sync_group(
        self, step: ConsumerStep, assignments: tuple[SyncGroupRequestAssignment, ...], now: int
    ) -> None:
        if self._c.lookup.coordinator is None:
            self.fail_join(
                step, Errors.COORDINATOR_NOT_AVAILABLE, Retry.BACKOFF, now, "coordinator unknown"
            )
            return
        self._c._send(
            step,
            self._c.lookup.coordinator,
            SyncGroupRequest(
                group_id=self._c.config.group_id,
                generation_id=self.generation.generation_id,
                member_id=self.generation.member_id,
                group_instance_id=self._c.config.group_instance_id,
                protocol_type=PROTOCOL_TYPE,
                protocol_name=self.generation.protocol_name,
                assignments=assignments,
            ),
            now,
            member_id=self.generation.member_id,
            generation_id=self.generation.generation_id,
            assignments=len(assignments),
        )

    def _on_sync_group(
        self, step: ConsumerStep, entry: InFlightRequest, resp: SyncGroupResponse, now: int
    ) -> None:
        err = resp.error_code
        if self._join is None or self._join.done:
            return
        if err == NO_ERROR:
            if resp.protocol_type is not None and resp.protocol_type != PROTOCOL_TYPE:
                self.fail_join(
                    step,
                    Errors.INCONSISTENT_GROUP_PROTOCOL,
                    Retry.THROW,
                    now,
                    "protocol type mismatch",
                )
            elif self.generation.is_reset or self.member_state is not STATE_COMPLETING_REBALANCE:
                self.fail_join(
                    step,
                    Errors.ILLEGAL_GENERATION,
                    Retry.IMMEDIATE,
                    now,
                    "generation/state changed before SyncGroup answer",
                )
            elif (
                resp.protocol_name is not None
                and resp.protocol_name != self.generation.protocol_name
            ):
                self.fail_join(
                    step,
                    Errors.INCONSISTENT_GROUP_PROTOCOL,
                    Retry.THROW,
                    now,
                    "protocol name mismatch",
                )
            else:
                self._set_state(step, STATE_STABLE, now, "SyncGroup succeeded")
                self._rejoin_reason = ""
                self.rejoin_needed = False
                self._join.done = True
                self._join.assignment = resp.assignment
                self._c._maybe_drive(step, now)
            return
        self._react_to_join_error(step, SYNC_GROUP, err, entry, now)

    def _enable_heartbeat(self, step: ConsumerStep, now: int) -> None:
        """HeartbeatThread.enable -> Heartbeat.resetTimeouts."""
        hb = self.heartbeat
        hb.enabled = True
        hb.reset_timeouts(now)
        self.schedule_heartbeat(step, now)

    def schedule_heartbeat(self, step: ConsumerStep, now: int) -> None:
        hb = self.heartbeat
        if not hb.enabled or self._c.status is not STATUS_RUNNING:
            return
        if self._c.lookup.coordinator is None:
            at = now + self._c.config.retry_backoff_ms
        else:
            at = hb.next_deadline(self._poll_timeout_possible(now))
        if not self._c.config.heartbeat_thread:
            # no background thread: the application's loop heartbeats, between records or in
            # poll(), not during a stall or a record
            at = self._c.app.next_break(max(at, now))
        at = max(at, now)
        set_at = self._c._timers.deadlines.get(HeartbeatTimer)
        if set_at is not None and set_at <= at and set_at >= now:
            return  # an earlier wake-up is already set; it will re-plan
        step.effects.append(self._c._timers.set(HeartbeatTimer, at))

    def on_timer(self, step: ConsumerStep, now: int) -> None:
        """One pass of HeartbeatThread.run's loop."""
        hb = self.heartbeat
        if not hb.enabled:
            return
        if self._c._pending_leader is not None:
            # The application thread holds the coordinator's lock while its leader waits for
            # metadata (JoinGroupResponseHandler runs onLeaderElected inside
            # synchronized (AbstractCoordinator.this)), and each pass of HeartbeatThread.run
            # takes that lock: no heartbeat, no session or poll check until the wait ends.
            return
        if self.member_state.has_not_joined or hb.failed is not None:
            hb.enabled = False
            return
        if not self._c.config.heartbeat_thread and self._c.app.next_break(now) != now:
            # heartbeat_thread=False (kafkajs): the heartbeat, the session check and the
            # coordinator lookup run in the application's loop, between two records or in
            # poll(); a stall or a long record sends nothing until it ends
            self.schedule_heartbeat(step, now)
            return
        if self._c.lookup.coordinator is None:
            self._c._lookup_coordinator(step, now)
            self.schedule_heartbeat(step, now)
            return
        if hb.session_timeout_expired(now):
            self._c._mark_coordinator_unknown(
                step, "session timed out without receiving a heartbeat response", now
            )
            self.schedule_heartbeat(step, now)
            return
        if self._poll_timeout_possible(now) and hb.poll_timeout_expired(now):
            step.event(
                "poll_timeout",
                t_ms=now,
                member_id=self.generation.member_id,
                max_poll_interval_ms=self._c.config.max_poll_interval_ms,
            )
            self.leave(step, "consumer poll timeout has expired.", now)
            return
        if hb.should_heartbeat(now):
            hb.sent_heartbeat(now)
            self._c._send(
                step,
                self._c.lookup.coordinator,
                HeartbeatRequest(
                    group_id=self._c.config.group_id,
                    generation_id=self.generation.generation_id,
                    member_id=self.generation.member_id,
                    group_instance_id=self._c.config.group_instance_id,
                ),
                now,
                member_id=self.generation.member_id,
                generation_id=self.generation.generation_id,
            )
        self.schedule_heartbeat(step, now)

    def _poll_timeout_possible(self, now: int) -> bool:
        """Only an application outside poll() (stalled or processing past the deadline) can
        overrun max.poll.interval.ms: one waiting inside poll() keeps calling it. A client
        without a poll timer (``poll_timer`` False: kafkajs, sarama) never does."""
        if not self._c.config.poll_timer:
            return False
        return self._c.app.poll_timeout_possible(now, self.heartbeat.poll_deadline_ms)

    def _receive_heartbeat(self, now: int) -> None:
        self.heartbeat.receive_heartbeat(now)

    def _fail_heartbeat(self, step: ConsumerStep, now: int) -> None:
        hb = self.heartbeat
        hb.fail_heartbeat(now)
        set_at = self._c._timers.deadlines.get(HeartbeatTimer)
        if set_at is not None and set_at > hb.next_heartbeat_ms:
            self._c._timers.forget(HeartbeatTimer)
        self.schedule_heartbeat(step, now)

    def _on_heartbeat(
        self, step: ConsumerStep, entry: InFlightRequest, resp: HeartbeatResponse, now: int
    ) -> None:
        err = resp.error_code
        if err == NO_ERROR:
            self._receive_heartbeat(now)
        elif err == Errors.REBALANCE_IN_PROGRESS:
            if self.member_state is STATE_STABLE:
                self.request_rejoin(step, "group is already rebalancing", now)
                self._c._maybe_drive(step, now)
            self._receive_heartbeat(now)  # still counts as a live heartbeat
        elif err in (
            Errors.ILLEGAL_GENERATION,
            Errors.UNKNOWN_MEMBER_ID,
            Errors.FENCED_INSTANCE_ID,
        ):
            if self._generation_unchanged(entry):
                self.reset_state_and_rejoin(
                    step,
                    f"encountered {err.name} from HEARTBEAT response",
                    err is not Errors.ILLEGAL_GENERATION,
                    now,
                )
                if err is Errors.FENCED_INSTANCE_ID:
                    # The heartbeat thread fails; the next poll() throws.
                    self.heartbeat.failed = ConsumerFatal(
                        err.name, "group.instance.id fenced (Heartbeat)"
                    )
                else:
                    self._fail_heartbeat(step, now)
                self._c._maybe_drive(step, now)
            else:
                self._receive_heartbeat(now)
        elif err in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self._c._mark_coordinator_unknown(step, f"error response {err.name}", now)
            self._fail_heartbeat(step, now)
        else:
            # GROUP_AUTHORIZATION_FAILED and unexpected errors alike: the heartbeat future fails,
            # and HeartbeatThread's listener only calls failHeartbeat() (the thread keeps going).
            self._fail_heartbeat(step, now)

    def _on_leave_group(
        self, step: ConsumerStep, entry: InFlightRequest, resp: LeaveGroupResponse, now: int
    ) -> None:
        """AbstractCoordinator.LeaveGroupResponseHandler. Nothing acts on the outcome (the member
        reset its generation when it sent the request), but a failure is logged, as Kafka logs
        "LeaveGroup request with <generation> failed": an answer naming more than one member
        (IllegalStateException), or LeaveGroupResponse.error(): the top-level error, else the
        first member-level one (a member unknown to the coordinator: UNKNOWN_MEMBER_ID)."""
        if len(resp.members) > 1:
            error = "ILLEGAL_STATE"
        else:
            code = resp.error_code
            if code == NO_ERROR:
                for member in resp.members:
                    if member.error_code != NO_ERROR:
                        code = member.error_code
                        break
            if code == NO_ERROR:
                return
            error = error_code_name(code)
        step.event(
            "leave_group_failed",
            t_ms=now,
            error=error,
            member_id=entry.sent_generation.member_id,
            generation_id=entry.sent_generation.generation_id,
        )


#: The membership's response handlers, by the answer's type.
_RESPONSE_HANDLERS: dict[type, Callable[..., None]] = {
    JoinGroupResponse: ClassicMembershipManager._on_join_group,
    SyncGroupResponse: ClassicMembershipManager._on_sync_group,
    HeartbeatResponse: ClassicMembershipManager._on_heartbeat,
    LeaveGroupResponse: ClassicMembershipManager._on_leave_group,
}
