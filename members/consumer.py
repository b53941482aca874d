"""The simulated Kafka consumer: the client side of the classic group protocol, sans-I/O.

One ``Consumer`` plays a Java ``KafkaConsumer`` with ``group.protocol=classic``: its
``ConsumerCoordinator`` (the rebalance hooks around the join, offset commits), and an application
poll loop. The member's place in the group (``AbstractCoordinator``'s join loop, its response
handlers and the heartbeat thread) is its ``membership``, a ``MembershipManager``
(members.membership), the only way the facade reaches it; ``ClassicMembershipManager``
(members.classic_membership) is the classic one. Every public method takes the
simulated time and returns a ``ConsumerResult`` (members.result): the effects (``Send`` /
``SetTimer`` / ``CancelTimer``) and events of the call, as a value; nothing reads a clock. Inside
a call the entry point's ``ConsumerStep`` is passed down as an argument (``step``) to every method
that sends, sets a timer or logs, the membership manager's included; nothing holds it between
calls. Randomness (backoff jitter) comes from a ``random.Random(seed)``.

Threads, modelled:

* **The application thread** calls ``poll()`` (timer ``poll``). Inside it run what Kafka runs in
  ``poll()``: coordinator discovery, ``joinGroupIfNeeded`` (``onJoinPrepare`` before a JoinGroup,
  ``onJoinComplete`` after a SyncGroup), auto-commit, fetching. Between two polls the application
  is busy processing; work that belongs to the application thread and becomes ready while it is
  busy (a JoinGroup retry, ``onJoinComplete``) waits until it is back in ``poll()``.
* **The heartbeat thread** (timer ``heartbeat``), enabled only in COMPLETING_REBALANCE / STABLE:
  coordinator rediscovery, session-timer and poll-timer checks (``max.poll.interval.ms``: leave
  the group), heartbeats every ``heartbeat.interval.ms``. It wakes exactly at its next deadline.
* **The network client**: response handlers run when the response arrives (as Kafka's
  ``ConsumerNetworkClient`` completes futures on whichever thread polls it). A JoinGroup
  response therefore triggers the SyncGroup at once, the leader's assignment included.

Timer keys are typed (``members.timers``), rendered ``<name>:<incarnation>`` (and
``request-<correlation id>`` for request timeouts), so timers of a crashed incarnation are ignored
after ``restart``.

``Consumer`` is the facade over parts that each play one Kafka class and send nothing and set no
timer themselves (docs/members.md has the table): ``Heartbeat`` (members.heartbeat, held by the membership manager),
``ConsumerNetworkClient`` (members.network), ``CoordinatorLookup`` (members.coordinator_lookup),
``ConsumerMetadata`` (members.metadata), ``FetchPositions`` (members.positions),
``ApplicationLoop`` (members.application), ``SyncCommits``
and ``CommittedOffsetsLookup`` (members.offsets), the rebalance rules (members.rebalance), the
membership manager (members.classic_membership, which reads the JoinGroup / SyncGroup error table
of members.membership) and the timer table (members.timers).
The consumer sends what they decide, sets the timers they ask for and adds the events to the
call's step.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attrs import define

from assignors.api import (
    COOPERATIVE,
    EAGER,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
)
from coordinator.effects import CancelTimer
from coordinator.errors import NO_ERROR, Errors
from coordinator.protocol import (
    ConsumerGroupHeartbeatResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    HeartbeatResponse,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
    LeaveGroupResponse,
    MetadataRequest,
    MetadataResponse,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchRequestTopic,
    OffsetFetchResponse,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
    error_name,
)
from members import librdkafka_assignor, rebalance
from members.application import ApplicationLoop
from members.assignor_support import (
    KNOWN_PROTOCOLS,
    ResolvedAssignor,
    rebalance_protocol_of,
    resolve_assignors,
)
from members.backoff import ExponentialBackoff
from members.classic_membership import (
    ClassicMembershipManager,
)
from members.config import ConsumerConfig
from members.consumer_membership import (
    RECONCILE_COMMIT,
    ConsumerMembershipManager,
    ConsumerMemberState,
)
from members.consumer_protocol import (
    SchemaError,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscriptions,
)
from members.coordinator_lookup import CoordinatorLookup
from members.failure import ConsumerFatal
from members.listener import CallbackRecord, RebalanceListener, invoke
from members.membership import MembershipManager, Retry
from members.metadata import INTERNAL_TOPICS, ConsumerMetadata, metadata_topics, retain_topic
from members.network import ConsumerNetworkClient, InFlightRequest
from members.offsets import (
    CommitResult,
    CommittedOffsetsLookup,
    SyncCommits,
    offset_fetch_error,
)
from members.positions import FetchPositions
from members.result import NO_RESULT, ConsumerResult, ConsumerStep
from members.state import (
    STATE_COMPLETING_REBALANCE,
    STATE_PREPARING_REBALANCE,
    STATUS_CLOSED,
    STATUS_CLOSING,
    STATUS_CRASHED,
    STATUS_FAILED,
    STATUS_NEW,
    STATUS_RUNNING,
    Generation,
    MemberState,
)
from members.timers import (
    TIMER_NAMES,
    CloseTimer,
    CommitRetryTimer,
    ConsumerTimer,
    ConsumerTimers,
    DriveTimer,
    FindCoordinatorTimer,
    HeartbeatTimer,
    JoinPrepareTimer,
    JoinRetryTimer,
    MetadataTimer,
    PollTimer,
    RequestTimeout,
)
from members.transactions import TXN_APIS, TXN_RESPONSES, ExactlyOnce, TxnStep

COMMIT_HISTORY = 1000
COOPERATIVE_STICKY = "cooperative-sticky"

#: ConsumerUtils.DEFAULT_CLOSE_TIMEOUT_MS: close() without a timeout (capped at request.timeout.ms).
DEFAULT_CLOSE_TIMEOUT_MS = 30000
#: default.api.timeout.ms: how long commitSync() retries (not a ConsumerConfig field here).
DEFAULT_API_TIMEOUT_MS = 60000


#: The timers that still run while close() waits for its commitSync.
_CLOSING_TIMERS: frozenset[type[ConsumerTimer]] = frozenset(
    {CommitRetryTimer, FindCoordinatorTimer}
)


@define
class _PendingLeader:
    """A leader's assignment waiting for topic metadata (updateGroupSubscription)."""

    generation: Generation
    #: The assignor the JoinGroup answer selected (looked up before anything else).
    assignor: ResolvedAssignor
    members: list[tuple[str, str | None, Subscription]]
    skip_assignment: bool
    #: The assignor's result, kept while the metadata of topics it added is fetched.
    result: dict[str, list[TopicPartition]] | None = None


class Consumer:
    """A simulated classic-protocol consumer. See the module docstring for the threading model."""

    def __init__(
        self,
        node: str,
        config: ConsumerConfig,
        *,
        bootstrap: Sequence[str],
        topics: Sequence[str] | None = None,
        pattern: str | None = None,
        listener: RebalanceListener | None = None,
        seed: int = 0,
    ) -> None:
        if not isinstance(node, str) or not node:
            raise ValueError(f"node must be a non-empty string, got {node!r}")
        if isinstance(bootstrap, str):
            bootstrap = [bootstrap]
        if not bootstrap:
            raise ValueError("bootstrap must name at least one broker, e.g. ['broker-0']")
        self.node = node
        self.bootstrap: tuple[str, ...] = tuple(bootstrap)
        self.listener = listener
        self.seed = seed
        import random

        self._rng = random.Random(seed)
        self._configure(config)
        self._explicit_topics: tuple[str, ...] = ()
        self._pattern: re.Pattern[str] | None = None
        self._set_subscription(topics, pattern)
        # History kept across incarnations (queries).
        self.callbacks: list[CallbackRecord] = []
        # The most recent commits (bounded: a long simulation commits every 5 s per member).
        self.commits: deque[CommitResult] = deque(maxlen=COMMIT_HISTORY)
        self.committed: dict[TopicPartition, int] = {}
        self.incarnation = 0
        self.status = STATUS_NEW
        self.fatal_error: str | None = None
        self.network = ConsumerNetworkClient(
            node,
            request_timeout_ms=config.request_timeout_ms,
            join_request_timeout_ms=config.join_request_timeout_ms,
        )
        #: The exactly-once loop's transactional producer (``transactional_id`` set), else None.
        self.txn: ExactlyOnce | None = (
            None
            if config.transactional_id is None
            else ExactlyOnce(
                group_id=config.group_id,
                transactional_id=config.transactional_id,
                interval_ms=config.transaction_interval_ms,
                retry_backoff_ms=config.retry_backoff_ms,
                instance_id=config.group_instance_id,
            )
        )
        self._reset_incarnation_state()

    def _configure(self, config: ConsumerConfig) -> None:
        """What the configuration decides for a process: its assignors, its rebalance protocol,
        its backoff; the membership manager (classic or KIP-848) follows at each incarnation."""
        self.config = config
        self._assignors: list[ResolvedAssignor] = resolve_assignors(
            config.partition_assignment_strategy
        )
        self.rebalance_protocol: RebalanceProtocol = (
            rebalance_protocol_of(self._assignors)
            if config.group_protocol == "classic"
            else COOPERATIVE  # KIP-848 revokes and assigns incrementally
        )
        self._backoff = ExponentialBackoff(
            config.retry_backoff_ms, config.retry_backoff_max_ms, self._rng
        )

    # ------------------------------------------------------------------ state & queries

    def _reset_incarnation_state(self) -> None:
        # The timers of this incarnation (every incarnation change resets this state): their
        # keys, and the deadline each is set for.
        self._timers = ConsumerTimers(self.incarnation)
        if self.txn is not None:
            self.txn.restart(0)  # the next transaction is an interval after the start
        self.is_leader = False
        self._joined_subscription: tuple[str, ...] | None = None
        self._group_subscription: tuple[str, ...] | None = None
        self._assignment_snapshot: tuple | None = None
        self._pending_leader: _PendingLeader | None = None
        self._prepare_commit: CommitResult | None = None
        self._prepare_deadline: int | None = None
        #: revocation_time_ms: the application is inside onPartitionsRevoked/Lost until then;
        #: the JoinGroup that follows waits for it
        self._revoking_until: int | None = None
        self._revoked_in_prepare = False
        # The coordinator, its lookup, and the brokers requests go to.
        self.lookup = CoordinatorLookup(self.bootstrap, self._backoff)
        # a pattern subscriber's ensureFreshMetadata before a rebalance round: the metadata
        # version whose successor it waits for
        self._pattern_awaits_version: int | None = None
        self.network.reset()
        # The member's place in the group (AbstractCoordinator's join / heartbeat / leave side).
        self.membership: MembershipManager = (
            ClassicMembershipManager(self)
            if self.config.group_protocol == "classic"
            else ConsumerMembershipManager(self)
        )
        # The application thread: inside poll(), or busy until app.busy_until.
        self.app = ApplicationLoop(
            poll_interval_ms=self.config.poll_interval_ms,
            processing_time_ms=self.config.processing_time_ms,
            processing_time_per_record_ms=self.config.processing_time_per_record_ms,
        )
        # The owned partitions and their positions (SubscriptionState), and the records the
        # application consumes.
        self.fetch = FetchPositions(
            max_poll_records=self.config.max_poll_records,
            poll_interval_ms=self.config.poll_interval_ms,
            continuous=self.app.continuous,
        )
        # fetchCommittedOffsets: the OffsetFetch in flight, its retries
        self.offset_lookup = CommittedOffsetsLookup(self._backoff)
        self._last_now = 0
        self._next_auto_commit = 0
        # What the consumer knows of the topics, and when it asks again (Kafka's Metadata).
        self._md = ConsumerMetadata(self._backoff, self.config.metadata_max_age_ms)
        self._snapshot_value: tuple = ()
        self._close_commit: CommitResult | None = None
        self._close_deadline = 0  # close(): when its timer ends
        # close(), after the LeaveGroup: the coordinator whose pending requests it waits for
        self._close_node: str | None = None
        self.sync_commits = SyncCommits(self._backoff)
        self._poll_fatal: ConsumerFatal | None = None  # thrown from the next poll()

    # The membership state lives in the membership manager (members.classic_membership); these
    # read and write it there for the facade's ConsumerCoordinator hooks and the tests' harness.

    @property
    def generation(self) -> Generation:
        return self.membership.generation

    @generation.setter
    def generation(self, value: Generation) -> None:
        self.membership.generation = value

    @property
    def state(self) -> str:
        """The client MemberState name (UNJOINED / PREPARING_REBALANCE / ...)."""
        return self.membership.member_state._value_  # .value without the enum property lookup

    @property
    def member_state(self) -> MemberState | ConsumerMemberState:
        return self.membership.member_state

    @property
    def generation_id(self) -> int:
        return self.membership.generation.generation_id

    @property
    def member_id(self) -> str:
        return self.membership.generation.member_id

    @property
    def protocol_name(self) -> str | None:
        return self.membership.generation.protocol_name

    @property
    def group_id(self) -> str:
        return self.config.group_id

    @property
    def group_instance_id(self) -> str | None:
        return self.config.group_instance_id

    @property
    def is_static(self) -> bool:
        return self.config.group_instance_id is not None

    @property
    def assignment(self) -> list[TopicPartition]:
        """The partitions this member owns and consumes now (sorted).

        Empty once the process has crashed, closed or failed: a dead consumer consumes nothing,
        whatever it last believed (that belief stays readable as ``last_owned``).
        """
        return sorted(self.fetch.owned) if self.alive else []

    @property
    def owned(self) -> list[TopicPartition]:
        return self.assignment

    @property
    def in_group(self) -> bool:
        """Alive and holding a generation (not reset by a poll timeout or an error).

        A member can own partitions while out of the group: after a poll timeout Kafka's
        consumer keeps its assignment until the application's next poll() declares it lost,
        while the group has already handed those partitions to others (the KIP-62 zombie).
        """
        return self.alive and self.membership.in_group

    @property
    def last_owned(self) -> list[TopicPartition]:
        return sorted(self.fetch.owned)

    @property
    def positions(self) -> dict[TopicPartition, int]:
        self.fetch.materialize(self._last_now)
        return dict(self.fetch.positions)

    def positions_at(self, now_ms: int) -> dict[TopicPartition, int]:
        """Positions as of ``now_ms`` (``positions`` is as of the consumer's last event: records
        consumed since then are accounted when the consumer next runs or is asked here)."""
        self._last_now = max(self._last_now, now_ms)
        return self.positions

    @property
    def coordinator(self) -> str | None:
        return self.lookup.coordinator

    @property
    def subscription(self) -> tuple[str, ...]:
        return self._subscription

    @property
    def failed(self) -> bool:
        return self.status is STATUS_FAILED

    @property
    def alive(self) -> bool:
        return self.status in (STATUS_RUNNING, STATUS_CLOSING)

    @property
    def rejoin_needed(self) -> bool:
        return self.membership.rejoin_needed

    @property
    def rejoin_pending(self) -> bool:
        """Kafka's ``rejoinNeededOrPending()``, read-only: a rejoin is needed, or a join round
        finished but its assignment awaits the next poll() (the joinFuture is still set), or the
        subscription or metadata changed since the join. False with nothing subscribed."""
        if not self._subscribed:
            return False
        return (
            self.membership.rejoin_needed
            or self.membership.join_in_progress
            or (
                self._assignment_snapshot is not None
                and self._assignment_snapshot != self._snapshot_value
            )
            or (
                self._joined_subscription is not None
                and self._joined_subscription != self._subscription
            )
        )

    def group_standing(self) -> tuple[bool, int] | None:
        """The runner's settled check (``Simulation.is_stable``) in one call: None when the
        consumer takes no part in a group (it failed, or is UNJOINED with nothing to join), else
        whether it is settled (STABLE with no rejoin pending) and its generation id."""
        if self.status is STATUS_FAILED:
            return None
        membership = self.membership
        state = membership.member_state._value_
        if state == "STABLE":
            return not self.rejoin_pending, membership.generation.generation_id
        if state == "UNJOINED" and not self.rejoin_pending:
            return None
        return False, membership.generation.generation_id

    def callback_history(self) -> list[tuple[str, list[str]]]:
        """``[("revoked", ["t-0"]), ("assigned", [...]), ...]`` in invocation order."""
        return [(c.callback, c.partition_names()) for c in self.callbacks]

    # ------------------------------------------------------------------ helpers

    def _set_subscription(self, topics: Sequence[str] | None, pattern: str | None) -> None:
        """Validate first, then replace: a bad argument leaves the subscription as it was."""
        if isinstance(topics, str):
            topics = [topics]
        if topics and pattern:
            raise ValueError("subscribe to a topic list or a pattern, not both")
        compiled: re.Pattern[str] | None = None
        if pattern is not None:
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid subscription pattern {pattern!r}: {exc}") from exc
        for t in topics or ():
            if not isinstance(t, str) or not t.strip():
                raise ValueError(f"topic names must be non-blank strings, got {t!r}")
        self._pattern = compiled
        self._explicit_topics = () if compiled is not None else tuple(sorted(set(topics or ())))
        self._subscription = self._explicit_topics
        # Subscribed to anything? Read on every drive, so kept with what it derives from.
        self._subscribed = compiled is not None or bool(self._explicit_topics)

    def _pattern_matches(self) -> tuple[str, ...]:
        assert self._pattern is not None
        return tuple(
            sorted(
                t
                for t in self._md.partition_counts
                if t not in INTERNAL_TOPICS and self._pattern.fullmatch(t) is not None
            )
        )

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
        """Send a request with its timeout; ``extra`` fields go into the request_sent event."""
        corr, entry = self.network.send(
            step.effects, dst, message, now, self.membership.generation, commit, topics
        )
        # step.event, spelled out (as for response_received)
        step.events.append(
            (
                "request_sent",
                {
                    "t_ms": now,
                    "api": entry.api,
                    "dst": dst,
                    "correlation_id": corr,
                    **extra,
                    "node": step.node,
                    "group_id": step.group_id,
                },
            )
        )
        return corr

    # ------------------------------------------------------------------ entry points (public)
    #
    # Each returns what the call produced, as a value (members.result.ConsumerResult): the
    # effects for the runner to carry out and the events, in order, for it to record.

    def _call(
        self, now: int, body: Callable[..., None], *args: Any, **kwargs: Any
    ) -> ConsumerResult:
        """Run one input with a fresh ``ConsumerStep`` that the body's effects and events go to;
        advance the consumer's clock; hand back what the step gathered."""
        if now > self._last_now:
            self._last_now = now
        step = ConsumerStep(self.node, self.config.group_id)
        body(step, *args, **kwargs)
        return step.result()

    def start(self, now_ms: int) -> ConsumerResult:
        """Construct + subscribe + first poll(): discover the coordinator and join."""
        return self._call(now_ms, self._start, now_ms)

    def crash(self, now_ms: int) -> ConsumerResult:
        """The process dies: nothing more is sent or answered until ``restart`` (the result
        holds the crash's event and no effect)."""
        # the clock stays where the process died (positions are as of its last event)
        return self._call(self._last_now, self._crash, now_ms)

    def restart(self, now_ms: int, config: ConsumerConfig | None = None) -> ConsumerResult:
        """A new incarnation of the process, with ``config`` if given (see ``_restart``)."""
        return self._call(now_ms, self._restart, now_ms, config)

    def close(self, now_ms: int, *, timeout_ms: int | None = None) -> ConsumerResult:
        """KafkaConsumer.close(Duration) (see ``_close``)."""
        if timeout_ms is not None and timeout_ms < 0:
            # ClassicKafkaConsumer.close(Duration): IllegalArgumentException
            raise ValueError(f"the close timeout cannot be negative, got {timeout_ms}")
        return self._call(now_ms, self._close, now_ms, timeout_ms=timeout_ms)

    def subscribe(
        self, topics: Sequence[str] | None, now_ms: int, pattern: str | None = None
    ) -> ConsumerResult:
        """KafkaConsumer.subscribe (see ``_subscribe``)."""
        return self._call(now_ms, self._subscribe, topics, now_ms, pattern)

    def commit(self, now_ms: int) -> ConsumerResult:
        """commitSync() of the consumed positions (see ``_commit_now``)."""
        return self._call(now_ms, self._commit_now, now_ms)

    def stall(self, duration_ms: int, now_ms: int) -> ConsumerResult:
        """The application blocks (slow processing) for ``duration_ms`` before its next poll()."""
        if duration_ms < 0:
            raise ValueError(f"stall duration must be >= 0, got {duration_ms}")
        return self._call(now_ms, self._stall, duration_ms, now_ms)

    def handle_timer(self, key: str, now_ms: int) -> ConsumerResult:
        """A timer the consumer set fired: its rendered key is parsed back into the typed key
        (``members.timers``), whose type picks the handler (``_TIMER_HANDLERS``)."""
        # ``_call`` spelled out, the body inline: timers and answers are most of a consumer's
        # inputs
        if now_ms > self._last_now:
            self._last_now = now_ms
        if self.status not in (STATUS_RUNNING, STATUS_CLOSING):
            return NO_RESULT
        timer = self._timers.parse(key)
        if timer is None:
            return NO_RESULT  # a timer of an earlier incarnation
        step = ConsumerStep(self.node, self.config.group_id)
        if isinstance(timer, RequestTimeout):
            self._on_request_timeout(step, timer, now_ms)
            return step.result()
        kind = type(timer)
        if self.status is STATUS_CLOSING:
            if self._close_node is not None:
                # close() waits for the coordinator's answers and does nothing else
                if kind is CloseTimer:
                    self._close_timed_out(step, now_ms)
                return step.result()
            if kind not in _CLOSING_TIMERS and not (
                kind is MetadataTimer and self.lookup.awaits_metadata
            ):
                # close() only waits for its commit (and the coordinator it needs, whose lookup
                # may wait for a metadata refresh the backoff held back)
                return NO_RESULT
        _TIMER_HANDLERS[kind](self, step, now_ms)
        return step.result()

    def handle_disconnect(self, dst: str, correlation_id: int, now_ms: int) -> ConsumerResult:
        """The connection a request was in flight on broke."""
        return self._call(now_ms, self._handle_disconnect, dst, correlation_id, now_ms)

    def handle_response(
        self, src: str, correlation_id: int, message: object, now_ms: int
    ) -> ConsumerResult:
        """The answer to a request in flight arrived."""
        if now_ms > self._last_now:  # ``_call`` spelled out, the body inline, as handle_timer
            self._last_now = now_ms
        if self.status not in (STATUS_RUNNING, STATUS_CLOSING):
            return NO_RESULT
        entry = self.network.complete(correlation_id)
        if entry is None:
            return NO_RESULT  # a late answer to a request that timed out or an earlier incarnation
        step = ConsumerStep(self.node, self.config.group_id)
        step.effects.append(CancelTimer(entry.timer_key))
        # step.event, spelled out for the most frequent events (a dict literal, no call)
        step.events.append(
            (
                "response_received",
                {
                    "t_ms": now_ms,
                    "api": entry.api,
                    "src": src,
                    "correlation_id": correlation_id,
                    "error": error_name(message),
                    "node": step.node,
                    "group_id": step.group_id,
                },
            )
        )
        handler = _HANDLERS.get(type(message))
        try:
            if handler is None:
                step.event("response_ignored", t_ms=now_ms, api=entry.api, reason="unexpected type")
            elif handler is _MEMBERSHIP:
                # JoinGroup, SyncGroup, Heartbeat and LeaveGroup answers belong to the membership
                self.membership.on_response(step, entry, message, now_ms)
            else:
                handler(self, step, entry, message, now_ms)
        except ConsumerFatal as fatal:
            self._fail(step, fatal, now_ms)
        if self._close_node is not None:
            self._maybe_finish_closing(step, now_ms)
        return step.result()

    def mark_coordinator_unknown(self, reason: str, now_ms: int) -> ConsumerResult:
        """AbstractCoordinator.markCoordinatorUnknown, as a failed request or the heartbeat
        thread calls it (public in Kafka too; its tests call it directly)."""
        return self._call(now_ms, self._mark_coordinator_unknown, reason, now_ms)

    def maybe_leave_group(self, reason: str, now_ms: int) -> ConsumerResult:
        """AbstractCoordinator.maybeLeaveGroup(reason): a member in the group sends LeaveGroup;
        the generation is reset either way (Kafka's tests call it directly)."""
        return self._call(now_ms, self.membership.leave, reason, now_ms)

    def request_rejoin(self, reason: str, now_ms: int) -> ConsumerResult:
        """AbstractCoordinator.requestRejoin(reason): the next poll() rejoins."""
        return self._call(now_ms, self.membership.request_rejoin, reason, now_ms)

    # ------------------------------------------------------------------ lifecycle (public)

    def _start(self, step: ConsumerStep, now_ms: int) -> None:
        """Construct + subscribe + first poll(): discover the coordinator and join."""
        if self.status not in (STATUS_NEW, STATUS_CLOSED):
            return
        if self.status is STATUS_CLOSED:
            self.incarnation += 1
            self._reset_incarnation_state()
            self.fatal_error = None  # a consumer closed after a failure opens afresh
        self.status = STATUS_RUNNING
        step.event(
            "consumer_started",
            t_ms=now_ms,
            incarnation=self.incarnation,
            group_instance_id=self.config.group_instance_id,
            topics=list(self._explicit_topics),
            pattern=self._pattern.pattern if self._pattern else None,
            rebalance_protocol=self.rebalance_protocol.name,
        )
        if self._subscribed:
            self._request_update_for_new_topics(step, now_ms)  # subscribe()
        else:
            self._request_metadata(step, now_ms)
        self._poll(step, now_ms)
        return

    def _crash(self, step: ConsumerStep, now_ms: int) -> None:
        """The process dies: nothing more is sent or answered until ``restart``."""
        if self.status in (STATUS_RUNNING, STATUS_CLOSING):
            step.event(
                "consumer_crashed",
                t_ms=now_ms,
                member_id=self.membership.generation.member_id,
                generation_id=self.membership.generation.generation_id,
                partitions=[str(tp) for tp in self.assignment],
            )
            self.status = STATUS_CRASHED

    def _restart(
        self, step: ConsumerStep, now_ms: int, config: ConsumerConfig | None = None
    ) -> None:
        """A new incarnation of the process: dynamic members come back with a new member id
        (they join with ``""``); a static member keeps its group.instance.id and so takes the
        coordinator's replacement path (KIP-345). With ``config``, the new process runs that
        configuration (a deploy that changes it, e.g. ``group.protocol``: a rolling upgrade to
        KIP-848 or a downgrade); its group.id must stay the same."""
        if config is not None and config.group_id != self.config.group_id:
            raise ValueError(
                f"a restart cannot move {self.node} to another group "
                f"({self.config.group_id!r} -> {config.group_id!r})"
            )
        if self.status in (STATUS_RUNNING, STATUS_CLOSING):
            self._crash(step, now_ms)
        if config is not None:
            self._configure(config)
            self.network.request_timeout_ms = config.request_timeout_ms
            self.network.join_request_timeout_ms = config.join_request_timeout_ms
        self.incarnation += 1
        self._reset_incarnation_state()
        self.status = STATUS_NEW
        self.fatal_error = None
        step.event("consumer_restarted", t_ms=now_ms, incarnation=self.incarnation)
        self._start(step, now_ms)

    def _close(self, step: ConsumerStep, now_ms: int, *, timeout_ms: int | None = None) -> None:
        """KafkaConsumer.close(Duration): auto-commit synchronously, then onLeavePrepare +
        LeaveGroup, then wait for the requests still pending on the coordinator (the LeaveGroup
        included); all within the close timer, min(timeout, request.timeout.ms). The consumer is
        CLOSING until then. ``timeout_ms`` None is close(): the 30 s default
        (ConsumerUtils.DEFAULT_CLOSE_TIMEOUT_MS); 0 sends the commit and the LeaveGroup but
        waits for no answer."""
        if self.status is STATUS_FAILED:
            # Kafka's consumer can be closed after poll() threw; the simulated one has been
            # silent since its failure and closes without sending anything.
            step.event("consumer_closing", t_ms=now_ms)
            self._closed(step, now_ms)
            return
        if self.status is not STATUS_RUNNING:
            return
        self.status = STATUS_CLOSING
        step.event("consumer_closing", t_ms=now_ms)
        # ClassicKafkaConsumer.close: one timer, min(timeout, request.timeout.ms), bounds it all.
        timeout = DEFAULT_CLOSE_TIMEOUT_MS if timeout_ms is None else timeout_ms
        self._close_deadline = now_ms + min(timeout, self.config.request_timeout_ms)
        if self.config.enable_auto_commit:
            # maybeAutoCommitOffsetsSync, bounded by the close timer.
            op = self._commit(
                step, self._all_consumed(), "close", now_ms, sync_deadline=self._close_deadline
            )
            if not op.done:
                self._close_commit = op
                if now_ms >= self._close_deadline:
                    # a timer that has already run out: commitOffsetsSync sends the commit (or
                    # looks the coordinator up) and returns false at once
                    self._retry_sync_commits(step, now_ms)
                return
        self._finish_close(step, now_ms)
        return

    def _subscribe(
        self,
        step: ConsumerStep,
        topics: Sequence[str] | None,
        now_ms: int,
        pattern: str | None = None,
    ) -> None:
        """KafkaConsumer.subscribe: a changed subscription makes the next poll rejoin.

        An empty subscription is ``unsubscribe()``: partitions are revoked (or lost) and a
        dynamic member leaves the group.
        """
        old = (self._explicit_topics, self._pattern.pattern if self._pattern else None)
        self._set_subscription(topics, pattern)
        new = (self._explicit_topics, self._pattern.pattern if self._pattern else None)
        changed = old != new
        if self.status is not STATUS_RUNNING or not (changed or self._pattern):
            return
        if self._pattern is not None:
            # ConsumerCoordinator.updatePatternSubscription(metadata.fetch()): match what is known
            self._subscription = self._pattern_matches()
        if changed:
            step.event("subscription_changed", t_ms=now_ms, topics=list(new[0]), pattern=new[1])
            if not self._subscribed:
                self.membership.release_assignment(step, now_ms)
                self.membership.leave(step, "the consumer unsubscribed from all topics", now_ms)
                return
            self.membership.on_subscription_changed(step, now_ms)
            self._pattern_awaits_version = None
        # ClassicKafkaConsumer.subscribe: requestUpdateForNewTopics when the topics changed, and
        # always for a pattern
        self._request_update_for_new_topics(step, now_ms)
        if changed:
            self._maybe_drive(step, now_ms)  # the next poll() rejoins with the new subscription
        return

    def _commit_now(self, step: ConsumerStep, now_ms: int) -> None:
        """commitSync() of the consumed positions, retried until default.api.timeout.ms (the
        outcome lands in ``commits``; the application is not blocked meanwhile)."""
        if self.status is STATUS_RUNNING:
            self._commit(
                step,
                self._all_consumed(),
                "manual",
                now_ms,
                sync_deadline=now_ms + DEFAULT_API_TIMEOUT_MS,
            )
        return

    def _stall(self, step: ConsumerStep, duration_ms: int, now_ms: int) -> None:
        """The application blocks (slow processing) for ``duration_ms`` before its next poll()."""
        if self.status is not STATUS_RUNNING:
            return
        self.fetch.materialize(now_ms)
        if self.app.in_poll(now_ms):
            # heartbeat.poll(): the application was in poll() until now
            self.membership.on_poll(step, now_ms)
        until = self.app.stall(duration_ms, now_ms)
        self.fetch.accrue_from = until
        step.event("app_stalled", t_ms=now_ms, duration_ms=duration_ms, until_ms=until)
        self._set_poll_timer(step, until)
        self.membership.schedule_heartbeat(step, now_ms)  # the poll timer now counts
        return

    # ------------------------------------------------------------------ inputs (public)

    def _on_request_timeout(self, step: ConsumerStep, timer: RequestTimeout, now: int) -> None:
        """NetworkClient.handleTimedOutRequests: the request fails as a disconnect would."""
        corr = timer.correlation_id
        entry = self.network.complete(corr)
        if entry is None:
            return
        step.event("request_timeout", t_ms=now, api=entry.api, dst=entry.dst, correlation_id=corr)
        self._on_failed_request(step, entry, corr, now, "request timed out")
        self._request_update_after_disconnect(step, now)
        if self._close_node is not None:
            self._maybe_finish_closing(step, now)

    # The handlers of the consumer's own timers (``_TIMER_HANDLERS``), each a thread's wake-up.

    def _on_poll_timer(self, step: ConsumerStep, now: int) -> None:
        self._poll(step, now)

    def _on_drive_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(DriveTimer)
        self._drive(step, now)

    def _on_heartbeat_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(HeartbeatTimer)
        self.membership.on_timer(step, now)

    def _on_join_retry_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(JoinRetryTimer)
        self._maybe_drive(step, now)

    def _on_find_coordinator_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(FindCoordinatorTimer)
        self._lookup_coordinator(step, now)

    def _on_metadata_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(MetadataTimer)
        self._request_metadata(step, now)

    def _on_commit_retry_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(CommitRetryTimer)
        self._retry_sync_commits(step, now)

    def _on_join_prepare_timer(self, step: ConsumerStep, now: int) -> None:
        self._timers.forget(JoinPrepareTimer)
        self._maybe_drive(step, now)

    def _on_close_timer(self, step: ConsumerStep, now: int) -> None:
        """A close timer that fires while close() still waits for its commit: nothing to do
        (the commitSync's own deadline ends that wait)."""

    def _handle_disconnect(
        self, step: ConsumerStep, dst: str, correlation_id: int, now_ms: int
    ) -> None:
        if self.status not in (STATUS_RUNNING, STATUS_CLOSING):
            return
        entry = self.network.complete(correlation_id)
        if entry is None:
            return
        step.effects.append(CancelTimer(entry.timer_key))
        step.event(
            "request_failed",
            t_ms=now_ms,
            api=entry.api,
            dst=dst,
            correlation_id=correlation_id,
            reason="disconnected",
        )
        self._on_failed_request(step, entry, correlation_id, now_ms, "disconnected")
        self._request_update_after_disconnect(step, now_ms)
        if self._close_node is not None:
            self._maybe_finish_closing(step, now_ms)
        return

    # ------------------------------------------------------------------ failures

    def _fail(self, step: ConsumerStep, fatal: ConsumerFatal, now: int) -> None:
        """A fatal error thrown from poll(): the application stops using the consumer."""
        if self.status is STATUS_FAILED:
            return
        self.fatal_error = fatal.error
        self.membership.stop()
        step.event(
            "consumer_fatal",
            t_ms=now,
            error=fatal.error,
            reason=fatal.reason,
            member_id=self.membership.generation.member_id,
            generation_id=self.membership.generation.generation_id,
        )
        self.status = STATUS_FAILED
        step.effects.extend(self._timers.cancel_all())

    def _on_failed_request(
        self, step: ConsumerStep, entry: InFlightRequest, corr: int, now: int, reason: str
    ) -> None:
        """Disconnect or request timeout: Kafka's DisconnectException (retriable)."""
        try:
            if entry.api == "FindCoordinator":
                self.lookup.in_flight = None
                self.lookup.rotate_node()
                self._find_failed(step, now, reason)
            elif entry.api == "Metadata":
                self.lookup.rotate_node()
                # DefaultMetadataUpdater.handleFailedRequest -> Metadata.failedUpdate, then
                # handleServerDisconnect -> requestUpdate(false): retried after the refresh
                # backoff. A leader waiting for fresh metadata keeps waiting.
                self._md.failed_update(now)
                self._md.request_update(False)
                self._maybe_update_metadata(step, now)
                self._metadata_done_for_lookup(step, now)
            elif entry.api in TXN_APIS and self.txn is not None:
                # the producer's own connection (Kafka: a separate client): retried after the
                # backoff, the consumer's coordinator is not affected
                self.txn.failed(now)
                self._schedule_continuous_poll(step, now)
            elif entry.api == "OffsetFetch":
                self.offset_lookup.in_flight = None
                self._mark_coordinator_unknown(step, reason, now, disconnected=True)
                self._offset_fetch_failed(step, now)  # a DisconnectException: retriable
            else:
                self._mark_coordinator_unknown(step, reason, now, disconnected=True)
                if entry.api != "OffsetCommit":
                    # JoinGroup, SyncGroup, Heartbeat, LeaveGroup: the membership's own
                    self.membership.on_request_failed(step, entry, now, reason)
                elif entry.commit is not None:
                    self._finish_commit(
                        step, entry.commit, Errors.NETWORK_EXCEPTION.name, now, True
                    )
        except ConsumerFatal as fatal:
            self._fail(step, fatal, now)

    def _request_update_after_disconnect(self, step: ConsumerStep, now: int) -> None:
        """NetworkClient.processDisconnection -> DefaultMetadataUpdater.handleServerDisconnect:
        after a connection to a broker is lost, a request timeout included (handleTimedOutRequests
        closes the connection), Kafka calls Metadata.requestUpdate(false), as "the disconnect may
        be the result of stale metadata". A disconnect the client makes itself
        (NetworkClient.disconnect, when it marks the coordinator unknown) requests nothing.
        The update goes out once Metadata.timeToAllowUpdate allows (_maybe_update_metadata),
        so at once unless the last answer or failed request is recent; a request in flight
        serves it."""
        if self.status is not STATUS_RUNNING:
            return  # a closing consumer sends nothing new
        self._md.request_update(False)
        self._maybe_update_metadata(step, now)

    def _await_metadata_update(self, step: ConsumerStep, now: int) -> bool:
        """ConsumerNetworkClient.awaitMetadataUpdate: Metadata.requestUpdate(false), sent when the
        refresh backoff allows (_maybe_update_metadata), and wait for the next answer. False if
        there is nothing to ask metadata for, so nothing to wait for."""
        topics = metadata_topics(self._explicit_topics, self._group_subscription, self._pattern)
        if topics is not None and not topics:
            return False
        self._md.request_update(False)
        self._maybe_update_metadata(step, now)
        return True

    # ------------------------------------------------------------------ coordinator discovery

    def _lookup_coordinator(self, step: ConsumerStep, now: int) -> None:
        if self.lookup.coordinator is not None or self.lookup.in_flight is not None:
            return
        if self._close_node is not None:
            return  # close() past its LeaveGroup only waits: nothing looks the coordinator up
        retry_at = self._timers.deadlines.get(FindCoordinatorTimer)
        if retry_at is not None and now < retry_at:
            return
        if self.lookup.after_metadata:
            # ensureCoordinatorReady: after a retriable failure and its backoff,
            # client.awaitMetadataUpdate before the next lookup (the refresh also drops brokers
            # that are gone from the node list the lookup picks from)
            self.lookup.after_metadata = False
            self.lookup.awaits_metadata = self._await_metadata_update(step, now)
        if self.lookup.awaits_metadata:
            return
        self.lookup.in_flight = self._send(
            step, self.lookup.pick_node(), FindCoordinatorRequest(key=self.config.group_id), now
        )

    def _find_failed(self, step: ConsumerStep, now: int, reason: str) -> None:
        """AbstractCoordinator.ensureCoordinatorReady after a retriable FindCoordinator failure
        (an error answer or a disconnect): sleep the exponential backoff, then await a metadata
        update, then look up again."""
        delay = self.lookup.failed()
        step.effects.append(self._timers.set(FindCoordinatorTimer, now + delay))
        step.event("coordinator_lookup_failed", t_ms=now, reason=reason, retry_in_ms=delay)

    def _generation_unchanged(self, entry: InFlightRequest) -> bool:
        """The request was sent in the member's current generation."""
        return entry.sent_generation == self.membership.generation

    def _on_find_coordinator(
        self, step: ConsumerStep, entry: InFlightRequest, resp: FindCoordinatorResponse, now: int
    ) -> None:
        self.lookup.in_flight = None
        if resp.error_code == NO_ERROR:
            self.lookup.found(f"broker-{resp.node_id}")
            self._timers.forget(FindCoordinatorTimer)
            self.membership.on_coordinator_found(now)
            step.event("coordinator_discovered", t_ms=now, coordinator=self.lookup.coordinator)
            self._resume_sync_commits(step, now)
            self.membership.schedule_heartbeat(step, now)
            self._app_poll_now(step, now)
        elif resp.error_code == Errors.GROUP_AUTHORIZATION_FAILED:
            raise ConsumerFatal(
                resp.error_code.name, "FindCoordinator: not authorized for the group"
            )
        else:
            self.lookup.rotate_node()
            self._find_failed(step, now, resp.error_code.name)

    def _mark_coordinator_unknown(
        self, step: ConsumerStep, cause: str, now: int, disconnected: bool = False
    ) -> None:
        if self.lookup.coordinator is None:
            return
        step.event(
            "coordinator_unknown",
            t_ms=now,
            coordinator=self.lookup.coordinator,
            reason=cause,
            disconnected=disconnected,
        )
        old = self.lookup.mark_unknown()
        assert old is not None
        # Kafka disconnects from the old coordinator (disconnectAsync): every group request
        # still in flight on that connection fails with a DisconnectException.
        for corr, entry in list(self.network.coordinator_requests(old)):
            self.network.complete(corr)
            step.effects.append(CancelTimer(entry.timer_key))
            step.event(
                "request_failed",
                t_ms=now,
                api=entry.api,
                dst=old,
                correlation_id=corr,
                reason=cause,
            )
            self._on_failed_request(step, entry, corr, now, "coordinator disconnected")
        self._lookup_coordinator(step, now)
        self.membership.schedule_heartbeat(step, now)

    # ------------------------------------------------------------------ metadata

    def _maybe_update_metadata(self, step: ConsumerStep, now: int) -> None:
        """NetworkClient's DefaultMetadataUpdater.maybeUpdate, after anything that changes when
        the next metadata request is due: with none in flight, it goes out once
        Metadata.timeToNextUpdate is 0 (ConsumerMetadata.next_update_at), now or on the
        "metadata" timer (set again only if that time moved)."""
        md = self._md
        if md.in_flight is not None:
            return
        at = md.next_update_at(now)
        if at <= now:
            self._request_metadata(step, now)
        elif at != self._timers.deadlines.get(MetadataTimer):
            step.effects.append(self._timers.set(MetadataTimer, at))

    def _request_metadata(self, step: ConsumerStep, now: int) -> None:
        """The next metadata request is due (the "metadata" timer, or _maybe_update_metadata):
        send ConsumerMetadata's request unless one is in flight."""
        md = self._md
        if md.in_flight is not None:
            return
        topics = metadata_topics(self._explicit_topics, self._group_subscription, self._pattern)
        if topics is not None and not topics:
            # nothing to ask for: look again when the metadata would expire
            step.effects.append(
                self._timers.set(MetadataTimer, now + self.config.metadata_max_age_ms)
            )
            return
        requested = None if topics is None else tuple(sorted(topics))
        md.request_sent(
            self._send(
                step,
                self.lookup.pick_node(),
                MetadataRequest(topics=requested),
                now,
                topics=requested,
            ),
            now,
        )

    def _request_update_for_new_topics(self, step: ConsumerStep, now: int) -> None:
        """Metadata.requestUpdateForNewTopics: the update goes out at once (no refresh backoff),
        or after the answer to the request in flight, which is an older version."""
        self._md.request_update_for_new_topics()
        self._maybe_update_metadata(step, now)

    def _metadata_done_for_lookup(self, step: ConsumerStep, now: int) -> None:
        """The metadata refresh a coordinator lookup waits for is over (answered or failed: a
        failed one does not hold the lookup up further, as the next poll() would not)."""
        if self.lookup.awaits_metadata:
            self.lookup.awaits_metadata = False
            self._lookup_coordinator(step, now)

    def _on_metadata(
        self, step: ConsumerStep, entry: InFlightRequest, resp: MetadataResponse, now: int
    ) -> None:
        md = self._md
        invalid = md.update(now, resp, entry.topics is None, self._retain_topic)
        nodes = [f"broker-{b.node_id}" for b in sorted(resp.brokers, key=lambda b: b.node_id)]
        self.lookup.update_nodes(nodes)
        counts = md.partition_counts
        step.event(
            "metadata_updated",
            t_ms=now,
            topics={t: counts[t] for t in sorted(counts)},
            version=md.update_version,
        )
        if self._pattern is not None:
            matched = self._pattern_matches()
            if matched != self._subscription:
                step.event("pattern_matched", t_ms=now, topics=list(matched))
                self._subscription = matched
        self._refresh_metadata_snapshot()
        if invalid and self.status is STATUS_RUNNING:
            # Metadata.handleMetadataResponse keeps the topics answered INVALID_TOPIC_EXCEPTION
            # (an illegal name: Topic.validate) and ConsumerNetworkClient.poll ends with
            # Metadata.maybeThrowAnyException, so the application's poll() throws
            # InvalidTopicException("Invalid topics: [...]"), at once if it is inside poll() (a
            # leader waiting for this answer in ensureFreshMetadata is), else from its next one.
            fatal = ConsumerFatal(
                Errors.INVALID_TOPIC_EXCEPTION.name, f"Invalid topics: [{', '.join(invalid)}]"
            )
            if self.app.in_poll(now) or self._pending_leader is not None:
                raise fatal
            self._poll_fatal = fatal
        # the next refresh: metadata.max.age.ms later, or once the refresh backoff allows if an
        # update is still requested (a needed topic unavailable, handleMetadataResponse's
        # requestUpdate; or an answer to an older requestVersion)
        self._maybe_update_metadata(step, now)
        self._metadata_done_for_lookup(step, now)
        if self._pending_leader is not None and self._close_node is None:
            # ConsumerNetworkClient.awaitMetadataUpdate ends with the next update, even one
            # answering an older request without the group's new topics (those are asked for
            # again above, and their arrival changes the snapshot: the leader rejoins).
            self._continue_leader_assignment(step, now)
            if not self._leader_waits_for_metadata():
                self.membership.schedule_heartbeat(
                    step, now
                )  # the coordinator's lock is free again
        self._maybe_drive(step, now)

    def _retain_topic(self, topic: str) -> bool:
        """ConsumerMetadata.retainTopic, for this consumer's subscription."""
        return retain_topic(topic, self._subscription, self._group_subscription, self._pattern)

    def _metadata_snapshot(self) -> tuple:
        """ConsumerCoordinator.metadataSnapshot: the partition counts (and racks, for a rack-aware
        client) of the group's topics (leader) or the member's own, taken when metadata arrives
        or the leader assigns, not on every read (so a reset group subscription does not look
        like a metadata change)."""
        return self._snapshot_value

    def _refresh_metadata_snapshot(self) -> None:
        topics = set(self._subscription)
        if self._group_subscription:
            topics.update(self._group_subscription)
        self._snapshot_value = self._md.snapshot(topics, self.config.client_rack is not None)

    # ------------------------------------------------------------------ the application thread

    def _set_poll_timer(self, step: ConsumerStep, at: int) -> None:
        if self._timers.deadlines.get(PollTimer) != at:
            step.effects.append(self._timers.set(PollTimer, at))

    def _poll(self, step: ConsumerStep, now: int) -> None:
        """The application calls KafkaConsumer.poll() at ``now``.

        Continuous model (no processing time, the default): this runs when the application
        enters poll() (start, end of a stall), when an auto-commit falls due, and when the
        coordinator is found; the batches in between are accounted lazily. Processing model: one
        batch per call, processed for ``processing_time_ms (+ per record)``, then the next poll.
        """
        if self.status is not STATUS_RUNNING or not self.app.in_poll(now):
            return
        self._timers.forget(PollTimer)
        self.membership.on_poll(step, now)
        try:
            if self.membership.fatal is not None:
                raise self.membership.fatal
            if self._poll_fatal is not None:
                raise self._poll_fatal
            self._drive(step, now)
            if self.status is not STATUS_RUNNING:
                return
            self._maybe_auto_commit(step, now)
            self._maybe_transaction(step, now)
            self._maybe_fetch_offsets(step, now)
        except ConsumerFatal as fatal:
            self._fail(step, fatal, now)
            return
        if self.app.continuous:
            self.fetch.materialize(now)
            self._schedule_continuous_poll(step, now)
            return
        self._set_poll_timer(step, self.app.processed(self.fetch.consume_batch(), now))

    def _schedule_continuous_poll(self, step: ConsumerStep, now: int) -> None:
        """The next time the always-polling application has something to do on its own."""
        app = self.app
        if not app.continuous or self.status is not STATUS_RUNNING:
            return
        if not app.in_poll(now):
            self._set_poll_timer(step, app.busy_until)
            return
        due = []
        if (
            self.config.enable_auto_commit
            and self.lookup.coordinator is not None
            and not self._join_incomplete()
        ):
            due.append(self._next_auto_commit)
        if self.txn is not None and self.lookup.coordinator is not None:
            txn_due = self.txn.next_wakeup()
            if txn_due is not None and not self._join_incomplete():
                due.append(txn_due)
        if self.offset_lookup.retry_at is not None:
            due.append(self.offset_lookup.retry_at)
        at = app.next_wakeup(now, due)
        if at is not None:
            set_at = self._timers.deadlines.get(PollTimer)
            if set_at is None or set_at < now or at < set_at:
                self._set_poll_timer(step, at)

    def _app_poll_now(self, step: ConsumerStep, now: int) -> None:
        """Something the application's poll() was waiting for happened (coordinator found)."""
        if self.app.continuous and self.app.in_poll(now):
            self._poll(step, now)
        else:
            self._maybe_drive(step, now)

    def _maybe_drive(self, step: ConsumerStep, now: int) -> None:
        """Run application-thread work now if the application is inside poll(), else when it is."""
        if self.status is not STATUS_RUNNING:
            return
        until = self.app.busy_until
        if now >= until:
            self._drive(step, now)
        elif self._timers.deadlines.get(DriveTimer) != until:
            step.effects.append(self._timers.set(DriveTimer, until))

    def _drive(self, step: ConsumerStep, now: int) -> None:
        """ConsumerCoordinator.poll up to the join: coordinator, then joinGroupIfNeeded."""
        if self.status is not STATUS_RUNNING or not self._subscribed:
            return
        try:
            if self.membership.fatal is not None:
                raise self.membership.fatal
            if self._poll_fatal is not None:
                raise self._poll_fatal
            self.membership.join(step, now)
        except ConsumerFatal as fatal:
            self._fail(step, fatal, now)

    def _rejoin_needed_or_pending(self, step: ConsumerStep, now: int) -> bool:
        if not self._subscribed:
            return False
        if (
            self._assignment_snapshot is not None
            and self._assignment_snapshot != self._snapshot_value  # _metadata_snapshot()
        ):
            self.membership.request_rejoin_if_necessary(step, "cached metadata has changed", now)
            return True
        if (
            self._joined_subscription is not None
            and self._joined_subscription != self._subscription
        ):
            self.membership.request_rejoin_if_necessary(step, "subscription has changed", now)
            return True
        return self.membership.rejoin_needed or self.membership.join_in_progress

    def _pattern_metadata_fresh(self, step: ConsumerStep, now: int) -> bool:
        """ConsumerCoordinator.poll, before a pattern subscriber (re)joins: it asks for a metadata
        update when Metadata.timeToAllowUpdate allows one (the refresh backoff after the last
        answer or failed request has passed) and then, as ConsumerNetworkClient.ensureFreshMetadata,
        waits for the next answer while an update is requested: the one it asked for, one in
        flight, or the retry of a failed one, which goes out once the backoff allows. So its
        JoinGroup carries the topics created or deleted since; the first join waits for the
        first metadata. Kafka repeats this on every poll() while the rebalance lasts; the
        simulator refreshes once per round, before onJoinPrepare. False while the consumer must
        wait."""
        md = self._md
        waiting = self._pattern_awaits_version
        if waiting is not None:
            if md.update_version == waiting:
                return False  # awaitMetadataUpdate: until the next answer
            self._pattern_awaits_version = None
            return True
        if md.time_to_allow_update(now) == 0:
            md.request_update(True)
        if md.awaits_update(now):
            md.request_update(False)  # awaitMetadataUpdate
            self._maybe_update_metadata(step, now)
            self._pattern_awaits_version = md.update_version
            return False
        return True

    # ------------------------------------------------------------------ callbacks

    def _invoke(
        self, step: ConsumerStep, callback: str, partitions: Sequence[TopicPartition], now: int
    ) -> None:
        generation = self.membership.generation
        record = CallbackRecord(now, callback, sorted(partitions), generation.generation_id)
        self.callbacks.append(record)
        step.event(
            "rebalance_callback",
            t_ms=now,
            callback=callback,
            partitions=record.partition_names(),
            generation_id=generation.generation_id,
            member_id=generation.member_id,
        )
        try:
            invoke(self.listener, callback, record.partitions)
        except Exception as exc:  # a user's listener must not break the simulation
            step.event("listener_error", t_ms=now, callback=callback, error=repr(exc))

    def _set_prepare_commit(self, op: CommitResult | None) -> None:
        """onJoinPrepare's commit is out (or over): an EAGER member's partitions are pending
        revocation meanwhile, and not fetched (maybeMarkPartitionsPendingRevocation)."""
        self._prepare_commit = op
        self.fetch.pending_revocation = (
            op is not None
            and self.rebalance_protocol is EAGER
            and self.config.pause_pending_revocation is not False
        )

    def _on_join_prepare(self, step: ConsumerStep, now: int) -> bool:
        """ConsumerCoordinator.onJoinPrepare: commit, then revoke or lose partitions (KIP-429)."""
        if self._revoking_until is not None:
            # the listener's callback (revocation_time_ms) is still running: joinGroupIfNeeded
            # goes on only once it has returned (to the JoinGroup, if this onJoinPrepare called it)
            if now < self._revoking_until:
                return False
            self._revoking_until = None
            if self._revoked_in_prepare:
                self._revoked_in_prepare = False
                return True
        if self.config.enable_auto_commit:
            if self._prepare_commit is None:
                if self._prepare_deadline is None:
                    self._prepare_deadline = now + self.config.rebalance_timeout_ms
                self.fetch.materialize(now)
                prepare = self._commit(step, self._all_consumed(), "join-prepare", now)
                self._set_prepare_commit(prepare)
                self.fetch.restart_accrual(now)
                if not prepare.done and self._timers.deadlines.get(JoinPrepareTimer) is None:
                    # onJoinPrepare waits for its commit at most until joinPrepareTimer
                    # expires (client.poll on the earlier of the poll and joinPrepare timers),
                    # then goes on without an answer: the application wakes at the deadline.
                    step.effects.append(self._timers.set(JoinPrepareTimer, self._prepare_deadline))
            op = self._prepare_commit
            deadline = self._prepare_deadline
            assert op is not None and deadline is not None
            if now >= deadline:
                step.event("join_prepare_commit_timeout", t_ms=now)
            elif not op.done:
                return False
            elif op.error is not None and op.retriable:
                self.fetch.materialize(now)
                self._set_prepare_commit(None)
                self.fetch.restart_accrual(now)
                # pollTimer.sleep(min(remaining, retry.backoff.ms)): not past joinPrepareTimer
                step.effects.append(
                    self._timers.set(
                        JoinRetryTimer, min(now + self.config.retry_backoff_ms, deadline)
                    )
                )
                return False
        revocation = rebalance.on_join_prepare(
            self.rebalance_protocol,
            self.membership.generation,
            self.fetch.owned,
            self._subscription,
        )
        blocked = False
        if revocation.callback is not None:
            if self.config.pause_pending_revocation is not None:
                self._log_revoked_uncommitted(step, revocation.partitions, now)
            self._invoke(step, revocation.callback, revocation.partitions, now)
            self.fetch.set_owned(revocation.keep, now)
            blocked = self._callback_blocks(step, revocation.partitions, now)
            self._revoked_in_prepare = blocked
        self.is_leader = False
        self._group_subscription = None
        self.fetch.materialize(now)
        self._set_prepare_commit(None)
        self.fetch.restart_accrual(now)
        self._prepare_deadline = None
        if self._timers.deadlines.get(JoinPrepareTimer) is not None:
            step.effects.append(self._timers.cancel(JoinPrepareTimer))
        return not blocked

    def _log_revoked_uncommitted(
        self, step: ConsumerStep, partitions: Sequence[TopicPartition], now: int
    ) -> None:
        """pause_pending_revocation set (either way): how far each partition about to be
        revoked was consumed past its last successful commit (the records its next owner
        consumes again; none listed: nothing). Logged only when the setting is given, so every
        other log stays as it was."""
        consumed = self.fetch.consumed(now)
        records = {
            str(tp): consumed[tp] - self.committed[tp]
            for tp in sorted(partitions)
            if tp in consumed and tp in self.committed and consumed[tp] > self.committed[tp]
        }
        step.event(
            "revoked_uncommitted",
            t_ms=now,
            generation_id=self.membership.generation.generation_id,
            records=records,
        )

    def _callback_blocks(
        self, step: ConsumerStep, partitions: Sequence[TopicPartition], now: int
    ) -> bool:
        """revocation_time_ms: the application's onPartitionsRevoked/Lost of ``partitions``
        (not an empty call) runs that long on the application thread, as a stall does: the
        poll timer keeps counting from this poll(), the heartbeat thread keeps going, and
        joinGroupIfNeeded resumes when the callback returns."""
        duration = self.config.revocation_time_ms
        if not duration or not partitions:
            return False
        self.fetch.materialize(now)
        if self.app.in_poll(now):
            self.membership.on_poll(step, now)
        until = self.app.stall(duration, now)
        self.fetch.accrue_from = until
        self._revoking_until = until
        step.event("app_stalled", t_ms=now, duration_ms=duration, until_ms=until)
        self._set_poll_timer(step, until)
        self.membership.schedule_heartbeat(step, now)
        return True

    def _on_join_complete(self, step: ConsumerStep, assignment_bytes: bytes, now: int) -> None:
        """ConsumerCoordinator.onJoinComplete."""
        if not self.is_leader:
            self._assignment_snapshot = None
        assignor = self._assignor_named(self.membership.generation.protocol_name)
        if assignor is None:
            raise ConsumerFatal(
                "ILLEGAL_STATE",
                f"coordinator selected invalid assignment protocol: {self.membership.generation.protocol_name}",
            )
        if len(assignment_bytes) < 2:
            raise ConsumerFatal(
                "ILLEGAL_STATE",
                "insufficient bytes available to read assignment from the sync-group response "
                f"(actual byte size {len(assignment_bytes)})",
            )
        try:
            partitions, _user_data = decode_assignment(assignment_bytes)
        except SchemaError as exc:
            raise ConsumerFatal("SCHEMA_ERROR", str(exc)) from exc
        assigned = sorted(set(partitions))
        step.event(
            "assignment_received",
            t_ms=now,
            partitions=[str(tp) for tp in assigned],
            generation_id=self.membership.generation.generation_id,
            member_id=self.membership.generation.member_id,
            protocol_name=self.membership.generation.protocol_name,
            is_leader=self.is_leader,
        )
        if not rebalance.assignment_matches_subscription(
            assigned, self._pattern, self._subscription
        ):
            self.membership.request_rejoin(
                step, "received assignment does not match the current subscription", now
            )
            return
        revoked, added = rebalance.on_join_complete(
            self.rebalance_protocol, self.fetch.owned, assigned
        )
        if revoked:
            self._invoke(step, rebalance.REVOKED, revoked, now)
            self.membership.request_rejoin(step, "need to revoke partitions and re-join", now)
            self._callback_blocks(step, revoked, now)
        self._maybe_update_joined_subscription(step, assigned, now)
        if assignor.instance is not None:
            try:
                assignor.instance.on_assignment(assigned, self.membership.generation.generation_id)
            except Exception as error:  # not `exc`: that name is a SchemaError above (mypyc)
                step.event("assignor_error", t_ms=now, error=repr(error), phase="on_assignment")
        if self.config.enable_auto_commit:
            self._next_auto_commit = now + self.config.auto_commit_interval_ms
        self.fetch.set_owned(assigned, now)
        self._invoke(step, rebalance.ASSIGNED, added, now)  # always called, possibly empty
        # Still inside poll(): updateFetchPositions looks up the new partitions' offsets, a new
        # fetchCommittedOffsets call (its attempts start again, with no backoff).
        self.offset_lookup.restart()
        self._maybe_fetch_offsets(step, now)
        self._schedule_continuous_poll(step, now)

    def _maybe_update_joined_subscription(
        self, step: ConsumerStep, assigned: Sequence[TopicPartition], now: int
    ) -> None:
        """ConsumerCoordinator.maybeUpdateJoinedSubscription: matching topics the leader assigned
        beyond the joined subscription join it (and the subscription), and their metadata is
        fetched, so that they do not look like a subscription change."""
        if self._pattern is None or self._joined_subscription is None:
            return
        joined = set(self._joined_subscription)
        added = {tp.topic for tp in assigned} - joined
        if not added:
            return
        current = set(self._subscription)
        self._joined_subscription = tuple(sorted(joined | added))
        if not added <= current:
            self._subscription = tuple(sorted(current | added))
            step.event("pattern_matched", t_ms=now, topics=list(self._subscription))
            self._request_update_for_new_topics(step, now)  # subscribeFromPattern changed it

    def _on_leave_prepare(self, step: ConsumerStep, now: int) -> None:
        """ConsumerCoordinator.onLeavePrepare: lost if out of the group or mid-rebalance."""
        state = self.membership.member_state
        assert isinstance(state, MemberState)  # the classic manager's hook
        callback = rebalance.on_leave_prepare(self.membership.generation, state, self.fetch.owned)
        if callback is None:
            return
        self._invoke(step, callback, list(self.fetch.owned), now)
        self.fetch.set_owned([], now)

    def _finish_close(self, step: ConsumerStep, now: int) -> None:
        """AbstractCoordinator.close: onLeavePrepare + maybeLeaveGroup, then
        awaitPendingRequests(coordinator, timer): the consumer stays CLOSING while requests to
        the coordinator are pending (answered, failed or timed out) and the close timer runs. It
        sends nothing new meanwhile. With the coordinator unknown nothing is waited for."""
        self.membership.stop()
        if self.config.internal_leave_group_on_close:
            self.membership.release_assignment(step, now)
            self.membership.leave(
                step,
                "the consumer is being closed",
                now,
                static_too=self.config.static_leave_group_on_close,
            )
        node = self.lookup.coordinator
        if node is not None and self.network.pending_request_count(node):
            if now < self._close_deadline:
                self._close_node = node
                step.effects.append(self._timers.set(CloseTimer, self._close_deadline))
                return
            self._emit_close_timeout(step, node, now)
        self._closed(step, now)

    def _maybe_finish_closing(self, step: ConsumerStep, now: int) -> None:
        """close() waits for the coordinator's pending requests: done when none is left."""
        node = self._close_node
        if (
            node is not None
            and self.status is STATUS_CLOSING
            and (self.lookup.coordinator != node or not self.network.pending_request_count(node))
        ):
            self._closed(step, now)

    def _close_timed_out(self, step: ConsumerStep, now: int) -> None:
        """The close timer ended with requests still pending: Kafka logs "Close timed out with
        N pending requests to coordinator, terminating client connections" and closes."""
        node = self._close_node
        assert node is not None
        self._emit_close_timeout(step, node, now)
        self._closed(step, now)

    def _emit_close_timeout(self, step: ConsumerStep, node: str, now: int) -> None:
        pending = sorted((corr, e.api) for corr, e in self.network.coordinator_requests(node))
        step.event(
            "close_timed_out",
            t_ms=now,
            coordinator=node,
            pending=len(pending),
            apis=[api for _, api in pending],
        )

    def _closed(self, step: ConsumerStep, now: int) -> None:
        self._close_node = None
        self.status = STATUS_CLOSED
        step.event("consumer_closed", t_ms=now)
        step.effects.extend(self._timers.cancel_all())

    # ------------------------------------------------------------------ JoinGroup / SyncGroup

    def _assignor_named(self, name: str | None) -> ResolvedAssignor | None:
        for a in self._assignors:
            if a.name == name:
                return a
        return None

    def _join_protocols(self) -> tuple[JoinGroupRequestProtocol, ...]:
        """ConsumerCoordinator.metadata(): one Subscription per assignor, in vote order."""
        self._joined_subscription = self._subscription
        topics = list(self._subscription)
        user_data = [
            a.instance.subscription_user_data(topics) if a.instance is not None else None
            for a in self._assignors
        ]
        sub = Subscription(
            topics=topics,
            owned_partitions=self.fetch.owned,
            generation_id=self.membership.generation.generation_id,
            rack_id=self.config.client_rack,
        )
        return tuple(
            JoinGroupRequestProtocol(a.name, metadata)
            for a, metadata in zip(
                self._assignors, encode_subscriptions(sub, user_data), strict=True
            )
        )

    def _on_leader_elected(self, step: ConsumerStep, resp: JoinGroupResponse, now: int) -> None:
        """ConsumerCoordinator.onLeaderElected: decode every subscription, assign, SyncGroup."""
        # lookupAssignor comes first: an unknown protocol fails before any metadata wait
        name = resp.protocol_name
        assignor = self._assignor_named(name)
        if assignor is None or assignor.instance is None:
            why = (
                f"coordinator selected invalid assignment protocol: {name}"
                if assignor is None
                else f"assignor {name!r} is not available: {assignor.unavailable}"
            )
            self.membership.fail_join(step, Errors.UNKNOWN_SERVER_ERROR, Retry.THROW, now, why)
            return
        members = []
        try:
            for m in resp.members:
                sub = decode_subscription(m.metadata)
                sub = Subscription(
                    topics=sub.topics,
                    user_data=sub.user_data,
                    owned_partitions=sub.owned_partitions,
                    generation_id=sub.generation_id,
                    group_instance_id=m.group_instance_id,
                    rack_id=sub.rack_id,
                )
                members.append((m.member_id, m.group_instance_id, sub))
        except SchemaError as exc:
            self.membership.fail_join(step, Errors.UNKNOWN_SERVER_ERROR, Retry.THROW, now, str(exc))
            return
        group_topics: set[str] = set()
        for _, _, sub in members:
            group_topics.update(sub.topics)
        self._group_subscription = tuple(sorted(group_topics))
        self.is_leader = True
        self._pending_leader = _PendingLeader(
            self.membership.generation, assignor, members, resp.skip_assignment
        )
        if self._update_group_subscription(step, now):
            return  # _on_metadata continues once the metadata is fresh
        self._continue_leader_assignment(step, now)

    def _update_group_subscription(self, step: ConsumerStep, now: int) -> bool:
        """ConsumerCoordinator.updateGroupSubscription, after the group subscription is set:
        SubscriptionState.groupSubscribe is true for topics beyond the leader's own subscription,
        and then Metadata.requestUpdateForNewTopics asks for them at once; then
        ConsumerNetworkClient.ensureFreshMetadata waits for the next metadata answer if an
        update is expected: Metadata.updateRequested() (one in flight, or one waiting for the
        refresh backoff after a failed request, an answer missing a needed topic or a
        disconnect) or timeToNextUpdate == 0 (never answered, or metadata.max.age.ms old).
        True if the leader must wait."""
        md = self._md
        if set(self._group_subscription or ()) - set(self._subscription):
            self._request_update_for_new_topics(step, now)  # SubscriptionState.groupSubscribe
        if not md.awaits_update(now):
            return False  # the metadata is fresh
        # awaitMetadataUpdate: requestUpdate(false), sent when the backoff allows, and wait for
        # the next answer; a failed request is retried after the backoff and the wait goes on
        # (its timer is Long.MAX_VALUE)
        md.request_update(False)
        self._maybe_update_metadata(step, now)
        return True

    def _leader_waits_for_metadata(self) -> bool:
        # a method, not `self._pending_leader is None` right after the call that may clear it:
        # mypy keeps the earlier narrowing to not-None across that call, and the compiled
        # build (mypyc, make accel) trusts mypy's types
        return self._pending_leader is not None

    def _continue_leader_assignment(self, step: ConsumerStep, now: int) -> None:
        pending, self._pending_leader = self._pending_leader, None
        if pending is None:
            return
        if (
            pending.generation != self.membership.generation
            or self.membership.member_state is not STATE_COMPLETING_REBALANCE
        ):
            # The member left the group while its leader waited for metadata (in the simulator
            # the application may unsubscribe meanwhile; Kafka's is blocked in onLeaderElected).
            # The join fails and is retried at once, as SyncGroupResponseHandler does for a
            # generation cleared before its answer (ILLEGAL_GENERATION); it must not stay pending.
            self.membership.fail_join(
                step,
                Errors.ILLEGAL_GENERATION,
                Retry.IMMEDIATE,
                now,
                "generation/state changed while the leader waited for metadata",
            )
            return
        self._refresh_metadata_snapshot()
        if pending.skip_assignment:
            step.event(
                "assignment_skipped",
                t_ms=now,
                generation_id=self.membership.generation.generation_id,
            )
            self._assignment_snapshot = self._metadata_snapshot()
            self.membership.send_sync_group(step, (), now)
            return
        assignor = pending.assignor
        assert assignor.instance is not None
        name = assignor.name
        subscriptions = {member_id: sub for member_id, _, sub in pending.members}
        result = pending.result
        if result is None:
            group_topics = self._group_subscription or ()
            cluster = self._md.cluster(group_topics)
            try:
                if self.config.sticky_assignor_ignores_owned and name == COOPERATIVE_STICKY:
                    result = self._librdkafka_1_6_assign(
                        step, assignor.instance, cluster, pending, now
                    )
                else:
                    result = assignor.instance.assign(cluster, subscriptions)
            except Exception as exc:
                self.membership.fail_join(
                    step,
                    Errors.UNKNOWN_SERVER_ERROR,
                    Retry.THROW,
                    now,
                    f"assignor {name} failed: {exc!r}",
                )
                return
            if self.rebalance_protocol is COOPERATIVE and name != COOPERATIVE_STICKY:
                bad = rebalance.cooperative_violations(subscriptions, result)
                if bad:
                    self.membership.fail_join(
                        step,
                        Errors.UNKNOWN_SERVER_ERROR,
                        Retry.THROW,
                        now,
                        "assignor supporting the COOPERATIVE protocol violates its requirements: "
                        f"reassigned still-owned partitions {[str(tp) for tp in bad]}",
                    )
                    return
            if self._maybe_update_group_subscription(step, name, result, now) and (
                self._update_group_subscription(step, now)
            ):
                pending.result = result
                self._pending_leader = pending
                return
        self._assignment_snapshot = self._metadata_snapshot()
        order = [member_id for member_id, _, _ in pending.members]
        order += sorted(m for m in result if m not in subscriptions)
        assignments = tuple(
            SyncGroupRequestAssignment(member_id, encode_assignment(result[member_id]))
            for member_id in order
            if member_id in result
        )
        step.event(
            "assignment_computed",
            t_ms=now,
            generation_id=self.membership.generation.generation_id,
            protocol_name=name,
            members=len(pending.members),
            assignment={m: [str(tp) for tp in result[m]] for m in order if m in result},
        )
        self.membership.send_sync_group(step, assignments, now)

    def _librdkafka_1_6_assign(
        self, step: ConsumerStep, instance: Any, cluster: Any, pending: Any, now: int
    ) -> dict[str, list[TopicPartition]]:
        """sticky_assignor_ignores_owned: librdkafka 1.6's leader (members/librdkafka_assignor.py):
        the assignor runs as if nobody owned anything, then the cooperative step withholds what
        it moved between owners."""
        subscriptions = {member_id: sub for member_id, _, sub in pending.members}
        raw = instance.assign(cluster, librdkafka_assignor.without_owned(subscriptions))
        result = librdkafka_assignor.cooperative_adjust(subscriptions, raw)
        step.event(
            "sticky_owned_ignored",
            t_ms=now,
            generation_id=self.membership.generation.generation_id,
            computed={m: [str(tp) for tp in ps] for m, ps in raw.items()},
            withheld=[str(tp) for tp in librdkafka_assignor.withheld(raw, result)],
        )
        return result

    def _maybe_update_group_subscription(
        self,
        step: ConsumerStep,
        name: str | None,
        result: Mapping[str, Sequence[TopicPartition]],
        now: int,
    ) -> bool:
        """ConsumerCoordinator.maybeUpdateGroupSubscription: a custom assignor (not one of
        ConsumerConfig.ASSIGN_FROM_SUBSCRIBED_ASSIGNORS) may assign topics nobody subscribed
        to; they join the group subscription, and the leader waits for their metadata
        (updateGroupSubscription) before taking its assignment snapshot. True if they did."""
        if name in KNOWN_PROTOCOLS:
            return False
        group = set(self._group_subscription or ())
        added = {tp.topic for partitions in result.values() for tp in partitions} - group
        if not added:
            return False
        step.event("group_subscription_extended", t_ms=now, topics=sorted(added))
        self._group_subscription = tuple(sorted(group | added))
        return True

    # ------------------------------------------------------------------ heartbeat thread

    # ------------------------------------------------------------------ offsets

    def _all_consumed(self) -> dict[TopicPartition, int]:
        return self.fetch.consumed(self._last_now)

    def _maybe_fetch_offsets(self, step: ConsumerStep, now: int) -> None:
        """initWithCommittedOffsetsIfNeeded: positions of new partitions start at the commit."""
        if self.offset_lookup.in_flight is not None or self.lookup.coordinator is None:
            return
        if self.status is not STATUS_RUNNING:
            return  # only poll() looks offsets up (updateFetchPositions); close() never does
        if self.offset_lookup.retry_at is not None:
            if now < self.offset_lookup.retry_at:
                return  # fetchCommittedOffsets is sleeping its backoff
            self.offset_lookup.retry_at = None
        if len(self.fetch.ready()) == len(self.fetch.owned):
            return
        missing = self.fetch.missing()
        by_topic: dict[str, list[int]] = {}
        for tp in missing:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        self.offset_lookup.in_flight = self._send(
            step,
            self.lookup.coordinator,
            OffsetFetchRequest(
                group_id=self.config.group_id,
                topics=tuple(
                    OffsetFetchRequestTopic(t, tuple(ps)) for t, ps in sorted(by_topic.items())
                ),
                # sendOffsetFetchRequest always asks for stable offsets (KIP-447): pending
                # transactional offsets are answered UNSTABLE_OFFSET_COMMIT, to be retried.
                require_stable=True,
            ),
            now,
            partitions=[str(tp) for tp in missing],
        )

    def _on_offset_fetch(
        self, step: ConsumerStep, entry: InFlightRequest, resp: OffsetFetchResponse, now: int
    ) -> None:
        """ConsumerCoordinator.OffsetFetchResponseHandler, as fetchCommittedOffsets reacts to it:
        a retriable error (UNSTABLE_OFFSET_COMMIT for a partition included) fails the whole
        lookup and it is retried after the backoff; any other error is thrown from poll()."""
        self.offset_lookup.in_flight = None
        error, retriable = offset_fetch_error(resp)
        if error != NO_ERROR:
            if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
                self._mark_coordinator_unknown(step, f"error response {error.name}", now)
            if not retriable:
                # GroupAuthorizationException, TopicAuthorizationException or a KafkaException
                # (UNKNOWN_TOPIC_OR_PARTITION: the partition does not exist; unexpected errors)
                # escapes updateFetchPositions and is thrown from poll().
                self._poll_fatal = ConsumerFatal(error.name, "OffsetFetch failed")
                self._maybe_drive(step, now)
                return
            self._offset_fetch_failed(step, now)
            return
        self.offset_lookup.restart()
        self.fetch.seek_committed(
            (
                (TopicPartition(topic.name, p.partition_index), p.committed_offset)
                for topic in resp.topics
                for p in topic.partitions
            ),
            now,
        )
        self._maybe_fetch_offsets(step, now)  # partitions that became ours while this was in flight

    def _offset_fetch_failed(self, step: ConsumerStep, now: int) -> None:
        """fetchCommittedOffsets after a retriable failure: timer.sleep(retryBackoff.backoff(
        attempts++)), an ExponentialBackoff (KIP-580), then it tries again. Kafka counts the
        attempts of one call, which its poll() timer bounds; the simulated application, always
        inside poll(), counts them until the lookup succeeds or a new assignment starts a new
        one."""
        self.offset_lookup.failed(now)
        self._schedule_continuous_poll(step, now)

    def _join_incomplete(self) -> bool:
        """A rejoin is needed or under way (as last evaluated by the join loop)."""
        return self._subscribed and (
            self.membership.rejoin_needed or self.membership.join_in_progress
        )

    def _maybe_auto_commit(self, step: ConsumerStep, now: int) -> None:
        """ConsumerCoordinator.maybeAutoCommitOffsetsAsync at the end of its poll(), which is
        reached only with a known coordinator and no join pending (poll returns early while
        ensureActiveGroup has not completed): the commit stays due until then, and
        onJoinComplete restarts the interval."""
        if not self.config.enable_auto_commit or now < self._next_auto_commit:
            return
        if self.lookup.coordinator is None or self._join_incomplete():
            return
        self._next_auto_commit = now + self.config.auto_commit_interval_ms
        self._commit(step, self._all_consumed(), "auto", now)

    def _commit(
        self,
        step: ConsumerStep,
        offsets: dict[TopicPartition, int],
        purpose: str,
        now: int,
        *,
        sync_deadline: int | None = None,
    ) -> CommitResult:
        """An async commit (auto, join-prepare), or with ``sync_deadline`` a commitSync that
        retries retriable failures and waits for an unknown coordinator until then."""
        op = CommitResult(
            now, purpose, dict(offsets), self.membership.commit_generation.generation_id
        )
        if not offsets:
            op.done = True
            return op
        self.commits.append(op)
        if sync_deadline is not None:
            self.sync_commits.add(op, sync_deadline)
            self._plan_sync_timer(step)
        self._send_commit(step, op, now)
        return op

    def _maybe_transaction(self, step: ConsumerStep, now: int) -> None:
        """The exactly-once loop (``transactional_id``; members.transactions), from poll():
        every ``transaction_interval_ms`` the consumed offsets go into a transaction with the
        consumer's groupMetadata() (ConsumerCoordinator's generation and member id, as
        OffsetCommit would carry them), and a failed step is sent again when its retry is due.
        Like an auto-commit, it waits for a known coordinator and a completed join."""
        txn = self.txn
        if txn is None or self.lookup.coordinator is None or self._join_incomplete():
            return
        request = txn.due_retry(now)
        if request is None and txn.step is TxnStep.IDLE and now >= txn.next_due:
            generation = self.membership.commit_generation
            request = txn.begin(
                now, self._all_consumed(), generation.generation_id, generation.member_id
            )
        if request is not None:
            self._send(step, self.lookup.coordinator, request, now)

    def _on_txn_response(
        self, step: ConsumerStep, entry: InFlightRequest, message: object, now: int
    ) -> None:
        """An answer to AddOffsetsToTxn, TxnOffsetCommit or EndTxn: the transaction's next
        step goes out now (or after the backoff); an ended transaction is logged."""
        txn = self.txn
        if txn is None:
            return
        request, outcome = txn.on_response(message, now)
        if request is not None:
            if self.lookup.coordinator is None:
                txn.failed(now)
            else:
                self._send(step, self.lookup.coordinator, request, now)
        if txn.retry_at is not None:
            self._schedule_continuous_poll(step, now)
        if outcome is None:
            return
        done = outcome.transaction
        offsets = {str(tp): o for tp, o in sorted(done.offsets.items())}
        if done.committed:
            self.committed.update(done.offsets)
            step.event(
                "txn_committed",
                t_ms=now,
                transactional_id=txn.transactional_id,
                producer_id=txn.producer_id,
                generation_id=done.generation_id,
                offsets=offsets,
            )
        else:
            step.event(
                "txn_aborted",
                t_ms=now,
                transactional_id=txn.transactional_id,
                producer_id=txn.producer_id,
                generation_id=done.generation_id,
                error=done.error,
                offsets=offsets,
            )
        self._schedule_continuous_poll(step, now)

    def _plan_sync_timer(self, step: ConsumerStep) -> None:
        """One timer for every commitSync's next retry or deadline."""
        at = self.sync_commits.next_wakeup()
        if at is None:
            return
        set_at = self._timers.deadlines.get(CommitRetryTimer)
        if set_at is None or at < set_at:
            step.effects.append(self._timers.set(CommitRetryTimer, at))

    def _retry_sync_commits(self, step: ConsumerStep, now: int) -> None:
        for sync in self.sync_commits:
            if now >= sync.deadline_ms:
                # commitOffsetsSync returns false: commitSync throws TimeoutException, close()
                # logs it and goes on (an answer still in flight no longer matters).
                self._finish_commit(step, sync.op, "TIMEOUT", now, True)
            elif sync.retry_at is not None and now >= sync.retry_at:
                sync.retry_at = None
                self._send_commit(step, sync.op, now)
        self._plan_sync_timer(step)

    def _resume_sync_commits(self, step: ConsumerStep, now: int) -> None:
        """The coordinator is known again: commitSyncs waiting for it send their request."""
        for sync in self.sync_commits:
            if sync.retry_at is None and not sync.in_flight:
                self._send_commit(step, sync.op, now)

    def _send_commit(self, step: ConsumerStep, op: CommitResult, now: int) -> None:
        """ConsumerCoordinator.sendOffsetCommitRequest (plus local failures)."""
        offsets = op.offsets
        purpose = op.purpose
        if self.lookup.coordinator is None:
            sync = self.sync_commits.of(op)
            if sync is None:
                self._finish_commit(step, op, Errors.COORDINATOR_NOT_AVAILABLE.name, now, True)
            else:
                self._lookup_coordinator(step, now)  # ensureCoordinatorReady, within the deadline
            return
        local_error = self.membership.local_commit_error()
        if (
            local_error == "REBALANCE_IN_PROGRESS"
            and self.config.commit_during_rebalance
            and self.membership.generation.generation_id >= 0
        ):
            # commit_during_rebalance (franz-go before 1.4.0): it goes out with the generation
            # the member has, where Java's generationIfStable() fails it locally
            local_error = None
        if local_error is not None:
            self._finish_commit(step, op, local_error, now, False)
            return
        generation = self.membership.commit_generation
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for tp in sorted(offsets):
            by_topic.setdefault(tp.topic, []).append(
                OffsetCommitRequestPartition(tp.partition, offsets[tp])
            )
        self._send(
            step,
            self.lookup.coordinator,
            OffsetCommitRequest(
                group_id=self.config.group_id,
                generation_id=generation.generation_id,
                member_id=generation.member_id,
                topics=tuple(OffsetCommitRequestTopic(t, tuple(ps)) for t, ps in by_topic.items()),
                group_instance_id=self.config.group_instance_id,
            ),
            now,
            commit=op,
            purpose=purpose,
            generation_id=generation.generation_id,
            partitions=len(offsets),  # the offsets themselves are in commit_completed
        )
        sync = self.sync_commits.of(op)
        if sync is not None:
            sync.in_flight = True

    def _finish_commit(
        self, step: ConsumerStep, op: CommitResult, error: str | None, now: int, retriable: bool
    ) -> None:
        if op.done:  # a commitSync that timed out: its late answer changes nothing for the caller
            if error is None:
                self.committed.update(op.offsets)
            return
        sync = self.sync_commits.of(op)
        if sync is not None:
            sync.in_flight = False
            if error is not None and retriable and error != "TIMEOUT":
                # commitOffsetsSync: sleep the exponential backoff (at most until the deadline)
                retry_at = self.sync_commits.back_off(sync, now)
                step.event(
                    "commit_failed",
                    t_ms=now,
                    purpose=op.purpose,
                    error=error,
                    retriable=retriable,
                    generation_id=op.generation_id,
                    retry_in_ms=retry_at - now,
                )
                self._plan_sync_timer(step)
                return
            self.sync_commits.finish(sync)
        op.done = True
        op.error = error
        op.retriable = retriable
        if error is None:
            self.committed.update(op.offsets)
            step.event(
                "commit_completed",
                t_ms=now,
                purpose=op.purpose,
                generation_id=op.generation_id,
                offsets={str(tp): off for tp, off in sorted(op.offsets.items())},
            )
        else:
            step.event(
                "commit_failed",
                t_ms=now,
                purpose=op.purpose,
                error=error,
                retriable=retriable,
                generation_id=op.generation_id,
            )
            if op.purpose == "auto" and retriable:
                self._next_auto_commit = now + self.config.retry_backoff_ms
                self._schedule_continuous_poll(step, now)
        if op is self._prepare_commit or op.purpose == RECONCILE_COMMIT:
            self._maybe_drive(step, now)  # onJoinPrepare / a KIP-848 reconciliation waits for it
        if op is self._close_commit:
            self._close_commit = None
            self._finish_close(step, now)

    def _on_offset_commit(
        self, step: ConsumerStep, entry: InFlightRequest, resp: OffsetCommitResponse, now: int
    ) -> None:
        op = entry.commit
        if op is None:
            return
        error: Errors | None = None
        for topic in resp.topics:
            for p in topic.partitions:
                if p.error_code != NO_ERROR:
                    error = p.error_code
                    break
            if error is not None:
                break
        if error is None:
            self._finish_commit(step, op, None, now, False)
            return
        if self.config.commit_error_handling != "java" and error in _GROUP_COMMIT_ERRORS:
            self._franz_go_commit_error(step, op, resp, error, now)
            return
        if error in (Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.UNKNOWN_TOPIC_OR_PARTITION):
            self._finish_commit(step, op, error.name, now, True)
        elif error in (
            Errors.COORDINATOR_NOT_AVAILABLE,
            Errors.NOT_COORDINATOR,
            Errors.REQUEST_TIMED_OUT,
        ):
            self._mark_coordinator_unknown(step, f"error response {error.name}", now)
            self._finish_commit(step, op, error.name, now, True)
        elif error == Errors.REBALANCE_IN_PROGRESS:
            self.membership.request_rejoin(
                step, "offset commit failed since group is already rebalancing", now
            )
            self._finish_commit(step, op, "REBALANCE_IN_PROGRESS", now, False)
            self._maybe_drive(step, now)
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            if (
                not self._generation_unchanged(entry)
                and self.membership.member_state is STATE_PREPARING_REBALANCE
            ):
                self._finish_commit(step, op, "REBALANCE_IN_PROGRESS", now, False)
            else:
                self.membership.reset_state_and_rejoin(
                    step,
                    f"encountered {error.name} from OFFSET_COMMIT response",
                    error is not Errors.ILLEGAL_GENERATION,
                    now,
                )
                self._finish_commit(step, op, "COMMIT_FAILED", now, False)
                self._maybe_drive(step, now)
        elif error == Errors.FENCED_INSTANCE_ID:
            if self._generation_unchanged(entry):
                self._finish_commit(step, op, error.name, now, False)
                # commitSync throws; an async (auto) commit sets asyncCommitFenced and the
                # next poll() throws: either way FencedInstanceIdException reaches the app.
                self._poll_fatal = ConsumerFatal(
                    error.name, "OffsetCommit: group.instance.id fenced"
                )
                self._maybe_drive(step, now)
            else:
                rebalancing = self.membership.member_state is STATE_PREPARING_REBALANCE
                self._finish_commit(
                    step,
                    op,
                    "REBALANCE_IN_PROGRESS" if rebalancing else "COMMIT_FAILED",
                    now,
                    False,
                )
        else:
            self._finish_commit(step, op, error.name, now, False)

    def _franz_go_commit_error(
        self,
        step: ConsumerStep,
        op: CommitResult,
        resp: OffsetCommitResponse,
        error: Errors,
        now: int,
    ) -> None:
        """franz-go's groupConsumer.commit: the answer goes to the caller's onDone and the
        membership is left alone (the heartbeat loop alone finds rebalances). From 1.4.0
        (commitAcrossRebalance, commit d11066f, franz-go#137), a cooperative member first sends
        the commit again, with the generation it has by then, while every partition failed with
        REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION, it still owns every committed partition
        and it has tried fewer than three times (one failure per cooperative round)."""
        errors = {p.error_code for t in resp.topics for p in t.partitions}
        if (
            self.config.commit_error_handling == "franz-go-1.4"
            and self.rebalance_protocol is COOPERATIVE
            and op.tries < 3
            and errors <= _ACROSS_REBALANCE_ERRORS
            and set(op.offsets) <= set(self.assignment)
        ):
            op.tries += 1
            step.event(
                "commit_retried",
                t_ms=now,
                purpose=op.purpose,
                error=error.name,
                generation_id=op.generation_id,
                retry_generation_id=self.membership.commit_generation.generation_id,
                tries=op.tries,
            )
            op.generation_id = self.membership.commit_generation.generation_id
            self._send_commit(step, op, now)
            return
        self._finish_commit(step, op, error.name, now, False)


#: The OffsetCommit errors about the group membership: the Java client resets, rejoins or
#: fails on them; franz-go (``commit_error_handling``) only reports them to the caller.
_GROUP_COMMIT_ERRORS = frozenset(
    {
        Errors.REBALANCE_IN_PROGRESS,
        Errors.ILLEGAL_GENERATION,
        Errors.UNKNOWN_MEMBER_ID,
        Errors.FENCED_INSTANCE_ID,
    }
)
#: The errors franz-go 1.4's commitAcrossRebalance retries.
_ACROSS_REBALANCE_ERRORS = frozenset({Errors.REBALANCE_IN_PROGRESS, Errors.ILLEGAL_GENERATION})


#: ``_HANDLERS``' mark for the answers the membership manager handles (``on_response``).
_MEMBERSHIP: Any = object()

#: Each answer's handler (``handle_response`` dispatches on the message's type).
_HANDLERS: dict[type, Any] = {
    FindCoordinatorResponse: Consumer._on_find_coordinator,
    MetadataResponse: Consumer._on_metadata,
    JoinGroupResponse: _MEMBERSHIP,
    SyncGroupResponse: _MEMBERSHIP,
    HeartbeatResponse: _MEMBERSHIP,
    OffsetCommitResponse: Consumer._on_offset_commit,
    OffsetFetchResponse: Consumer._on_offset_fetch,
    LeaveGroupResponse: _MEMBERSHIP,
    ConsumerGroupHeartbeatResponse: _MEMBERSHIP,
    **dict.fromkeys(TXN_RESPONSES, Consumer._on_txn_response),
}

#: What each of the consumer's timers wakes (``handle_timer`` dispatches on the key's type).
_TIMER_HANDLERS: dict[type[ConsumerTimer], Callable[[Consumer, ConsumerStep, int], None]] = {
    PollTimer: Consumer._on_poll_timer,
    DriveTimer: Consumer._on_drive_timer,
    HeartbeatTimer: Consumer._on_heartbeat_timer,
    JoinRetryTimer: Consumer._on_join_retry_timer,
    FindCoordinatorTimer: Consumer._on_find_coordinator_timer,
    MetadataTimer: Consumer._on_metadata_timer,
    CommitRetryTimer: Consumer._on_commit_retry_timer,
    JoinPrepareTimer: Consumer._on_join_prepare_timer,
    CloseTimer: Consumer._on_close_timer,
}

__all__ = ["TIMER_NAMES", "CommitResult", "Consumer"]
