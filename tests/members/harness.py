"""Driving one Consumer by hand: capture its effects, answer its requests with made-up responses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assignors.api import (
    ClusterLike,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    TopicPartition,
    as_cluster,
)
from coordinator.effects import CancelTimer, Send, SetTimer
from coordinator.errors import Errors
from coordinator.protocol import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
    LeaveGroupRequest,
    LeaveGroupResponse,
    LeaveGroupResponseMember,
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
    OffsetFetchResponsePartition,
    OffsetFetchResponseTopic,
    SyncGroupRequest,
    SyncGroupResponse,
    offset_commit_response,
)
from members.config import ConsumerConfig
from members.consumer import Consumer
from members.consumer_protocol import encode_assignment, encode_subscription
from members.result import ConsumerResult
from members.state import Generation
from scenarios.engine import Engine

TP = TopicPartition
_OWNER = "consumer"  # the engine's timers are per node; the harness has one


def tps(*names: str) -> list[TopicPartition]:
    return [TopicPartition.parse(n) for n in names]


class EventLog:
    """The events the consumer's (and the cluster's) calls returned, in order."""

    def __init__(self) -> None:
        self.events: list[dict] = []

    def record(self, events) -> None:
        for name, fields in events:
            self.events.append({**fields, "event": name})

    def named(self, name: str) -> list[dict]:
        return [e for e in self.events if e["event"] == name]


class RecordingListener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def on_partitions_revoked(self, partitions):
        self.calls.append(("revoked", [str(p) for p in partitions]))

    def on_partitions_assigned(self, partitions):
        self.calls.append(("assigned", [str(p) for p in partitions]))

    def on_partitions_lost(self, partitions):
        self.calls.append(("lost", [str(p) for p in partitions]))


class CooperativeRange(PartitionAssignor):
    """Range targets, made KIP-429-safe: a partition owned by someone else stays unassigned."""

    name = "coop-range"
    supported_protocols = (RebalanceProtocol.EAGER, RebalanceProtocol.COOPERATIVE)

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]):
        cluster = as_cluster(cluster)
        members = sorted(subscriptions)
        target: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            n = cluster.partitions_per_topic.get(topic)
            if n is None:
                continue
            subs = [m for m in members if topic in subscriptions[m].topics]
            per, extra = divmod(n, len(subs))
            start = 0
            for i, m in enumerate(subs):
                count = per + (1 if i < extra else 0)
                target[m].extend(TopicPartition(topic, p) for p in range(start, start + count))
                start += count
        owner = {tp: m for m in members for tp in subscriptions[m].owned_partitions}
        return {m: [tp for tp in target[m] if owner.get(tp, m) == m] for m in members}


class MockAssignor(PartitionAssignor):
    """Kafka's MockPartitionAssignor: hands out a prepared assignment whatever the metadata says,
    refuses to assign before ``prepare`` and counts ``on_assignment`` calls."""

    def __init__(
        self,
        protocols: Sequence[RebalanceProtocol] = (RebalanceProtocol.EAGER,),
        name: str = "consumer-mock-assignor",
    ) -> None:
        self.name = name
        self.supported_protocols = tuple(protocols)
        self.result: dict[str, list[TopicPartition]] | None = None
        self.assign_calls: list[tuple[ClusterLike, dict[str, Subscription]]] = []
        self.num_assignment = 0

    def prepare(self, result: Mapping[str, Sequence[TopicPartition]]) -> None:
        self.result = {m: list(p) for m, p in result.items()}

    def assign(self, cluster: ClusterLike, subscriptions: Mapping[str, Subscription]):
        if self.result is None:
            raise RuntimeError("Call to assign with no result prepared")
        self.assign_calls.append((cluster, dict(subscriptions)))
        return {m: list(p) for m, p in self.result.items()}

    def on_assignment(self, assignment: Sequence[TopicPartition], generation_id: int) -> None:
        self.num_assignment += 1


def rack_metadata_response(
    replicas: Mapping[str, Sequence[Sequence[int]]],
    *,
    nodes: int = 6,
    racks: Sequence[str] = ("rack-a", "rack-b", "rack-c"),
) -> MetadataResponse:
    """A Metadata answer from ``nodes`` brokers (broker i on ``racks[i % len(racks)]``) with the
    given replica lists per partition (the first replica leads), and no other topic (as Kafka's
    tests' ``rackAwareMetadata``)."""
    return MetadataResponse(
        brokers=tuple(
            MetadataResponseBroker(i, f"broker-{i}", 9092, racks[i % len(racks)])
            for i in range(nodes)
        ),
        topics=tuple(
            MetadataResponseTopic(
                topic,
                Errors.NONE,
                tuple(
                    MetadataResponsePartition(p, ids[0], tuple(ids)) for p, ids in enumerate(parts)
                ),
            )
            for topic, parts in replicas.items()
        ),
    )


class Harness:
    """One consumer, a fake coordinator ``broker-1``, and helpers to answer its requests."""

    def __init__(
        self,
        config: ConsumerConfig | None = None,
        *,
        topics: Sequence[str] | None = ("t",),
        pattern: str | None = None,
        partitions: Mapping[str, int] | None = None,
        node: str = "C1",
        seed: int = 0,
    ) -> None:
        self.config = config or ConsumerConfig(
            group_id="g", partition_assignment_strategy=("range",), enable_auto_commit=False
        )
        self.log = EventLog()
        self.listener = RecordingListener()
        self.partitions = dict(partitions or {"t": 4})
        self.consumer = Consumer(
            node,
            self.config,
            bootstrap=["broker-0"],
            topics=topics,
            pattern=pattern,
            listener=self.listener,
            seed=seed,
        )
        # the runner's engine: it holds the consumer's timers and fires them in order
        self.engine = Engine(timer_handler=self._fire)
        self._floor = 0
        self.sent: list[Send] = []  # every Send so far
        self._answered: set[int] = set()

    # --- the clock and the timers (on scenarios.engine.Engine) ---------------------------------

    @property
    def now(self) -> int:
        return self.engine.now

    @now.setter
    def now(self, t_ms: int) -> None:
        """A test moves the clock without firing anything: timers due before then fire late."""
        self._floor = t_ms
        self.engine.now = t_ms

    @property
    def timers(self) -> dict[str, int]:
        """The consumer's live timers: key -> deadline (read from the engine)."""
        engine = self.engine
        return {
            key: engine.timer_deadline(_OWNER, key)  # type: ignore[misc]
            for key in engine.timer_keys(_OWNER)
        }

    def _fire(self, _owner: str, key) -> None:
        if self.engine.now < self._floor:  # overtaken by a jump of the clock: it fires late
            self.engine.now = self._floor
        self._take(self.consumer.handle_timer(key, self.now))

    def fire(self, key: str) -> list:
        """Fire timer ``key`` now, ahead of its deadline (it is disarmed first)."""
        self.engine.cancel_timer(_OWNER, key)
        return self._take(self.consumer.handle_timer(key, self.now))

    # --- effects ---------------------------------------------------------------------------------

    def _take(self, result: ConsumerResult) -> list:
        """Record what one consumer call returned: its events, then its effects (returned)."""
        self.log.record(result.events)
        effects = list(result.effects)
        for e in effects:
            if isinstance(e, Send):
                self.sent.append(e)
            elif isinstance(e, SetTimer):
                self.engine.set_timer(_OWNER, e.key, e.deadline_ms)
            elif isinstance(e, CancelTimer):
                self.engine.cancel_timer(_OWNER, e.key)
        return effects

    def start(self):
        return self._take(self.consumer.start(self.now))

    def call(self, method: str, *args):
        return self._take(getattr(self.consumer, method)(*args, self.now))

    def close(self, timeout_ms: int | None = None):
        """KafkaConsumer.close(Duration.ofMillis(timeout_ms)); None: close() (30 s)."""
        return self._take(self.consumer.close(self.now, timeout_ms=timeout_ms))

    def pending(self, kind: type) -> list[Send]:
        """Requests of ``kind`` not answered yet, oldest first."""
        answered = self._answered
        return [
            s for s in self.sent if isinstance(s.message, kind) and s.correlation_id not in answered
        ]

    def last(self, kind: type) -> Send:
        found = [s for s in self.sent if isinstance(s.message, kind)]
        assert found, f"no {kind.__name__} was sent"
        return found[-1]

    def count(self, kind: type) -> int:
        return sum(1 for s in self.sent if isinstance(s.message, kind))

    def respond(self, request: Send, response: object):
        self._answered.add(request.correlation_id)
        return self._take(
            self.consumer.handle_response(request.dst, request.correlation_id, response, self.now)
        )

    def disconnect(self, request: Send):
        self._answered.add(request.correlation_id)
        return self._take(
            self.consumer.handle_disconnect(request.dst, request.correlation_id, self.now)
        )

    def rejoin(self, reason: str = "test") -> None:
        """Something asks for a rejoin (as the heartbeat thread would); the app is in poll()."""
        self._take(self.consumer.request_rejoin(reason, self.now))
        self._take(self.consumer.handle_timer(f"drive:{self.consumer.incarnation}", self.now))

    def mark_coordinator_unknown(self, reason: str = "test cause") -> None:
        """AbstractCoordinator.markCoordinatorUnknown, as a failed request or the heartbeat thread
        would call it: requests in flight to the coordinator fail, a lookup goes out."""
        self._take(self.consumer.mark_coordinator_unknown(reason, self.now))

    def maybe_leave_group(self, reason: str = "test") -> None:
        """AbstractCoordinator.maybeLeaveGroup: a dynamic member in the group sends LeaveGroup;
        the generation is reset either way."""
        self._take(self.consumer.maybe_leave_group(reason, self.now))

    def advance(self, to_ms: int) -> None:
        """Fire every timer due up to ``to_ms`` in deadline order (ties: the order they were
        set), as the runner's engine does; the clock then reads ``to_ms``."""
        self.engine.run(until=max(to_ms, self.now))

    # --- scripted answers ---------------------------------------------------------------------

    def metadata_response(self, topics=None) -> MetadataResponse:
        """Kafka's answer: the requested topics (all when ``topics`` is None)."""
        names = sorted(self.partitions) if topics is None else list(topics)
        return MetadataResponse(
            brokers=(
                MetadataResponseBroker(0, "broker-0", 9092),
                MetadataResponseBroker(1, "broker-1", 9092),
            ),
            topics=tuple(
                MetadataResponseTopic(
                    t, Errors.NONE, tuple(MetadataResponsePartition(p, 0, (0, 1)) for p in range(n))
                )
                if t in self.partitions
                else MetadataResponseTopic(t, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                for t, n in ((name, self.partitions.get(name, 0)) for name in names)
            ),
        )

    def wait_for(self, kind: type) -> int:
        """Advance the clock 1 ms at a time until a request of ``kind`` is pending; the ms waited."""
        start = self.now
        while not self.pending(kind):
            self.advance(self.now + 1)
        return self.now - start

    def answer_metadata(self) -> None:
        for req in self.pending(MetadataRequest):
            self.respond(req, self.metadata_response(req.message.topics))

    def refresh_metadata(self, response: MetadataResponse | None = None) -> Send:
        """The periodic metadata refresh falls due now; answer it with ``response`` (default: the
        current ``partitions``). Returns the request."""
        self.fire(f"metadata:{self.consumer.incarnation}")
        (req,) = self.pending(MetadataRequest)
        self.respond(req, response or self.metadata_response(req.message.topics))
        return req

    def await_metadata(self, response: MetadataResponse | None = None) -> Send:
        """Answer the metadata refresh the consumer waits for, as Kafka's MockClient answers a
        requested update (with a prepared answer, or the last one again): the request in flight,
        or else the one the refresh backoff holds back (the clock advances to it). ``response``
        defaults to the current ``partitions``. Returns the request."""
        if not self.pending(MetadataRequest):
            self.advance(self.timers[f"metadata:{self.consumer.incarnation}"])
        (req,) = self.pending(MetadataRequest)
        self.respond(req, response or self.metadata_response(req.message.topics))
        return req

    def answer_find_coordinator(self, node_id: int = 1) -> None:
        for req in self.pending(FindCoordinatorRequest):
            self.respond(
                req, FindCoordinatorResponse(Errors.NONE, node_id, f"broker-{node_id}", 9092)
            )

    def connect(self) -> None:
        """start(), metadata and coordinator answered: the JoinGroup is out."""
        self.start()
        self.answer_metadata()
        self.answer_find_coordinator()

    def answer_offset_fetch(
        self,
        committed: Mapping[str, int] | None = None,
        *,
        errors: Mapping[str, Errors] | None = None,
        group_error: Errors = Errors.NONE,
    ) -> None:
        """Answer OffsetFetch with ``committed`` ({"t-0": 42}); others have no offset (-1).

        ``errors`` ({"t-0": Errors.UNSTABLE_OFFSET_COMMIT}) fails single partitions;
        ``group_error`` fails the whole request (no partitions in the answer).
        """
        committed = committed or {}
        errors = errors or {}
        for req in self.pending(OffsetFetchRequest):
            if group_error != Errors.NONE:
                self.respond(req, OffsetFetchResponse(group_error))
                continue
            topics = tuple(
                OffsetFetchResponseTopic(
                    t.name,
                    tuple(
                        OffsetFetchResponsePartition(
                            p,
                            committed.get(f"{t.name}-{p}", -1),
                            error_code=errors.get(f"{t.name}-{p}", Errors.NONE),
                        )
                        for p in t.partition_indexes
                    ),
                )
                for t in req.message.topics or ()
            )
            self.respond(req, OffsetFetchResponse(Errors.NONE, topics))

    def answer_commit(self, request: Send, error: Errors = Errors.NONE):
        """Answer an OffsetCommit with ``error`` for every partition it names."""
        assert isinstance(request.message, OffsetCommitRequest)
        response = offset_commit_response(request.message, error)
        return self.respond(request, response)

    def answer_leave_group(self, error: Errors = Errors.NONE):
        """Answer the pending LeaveGroup: ``error`` for its one member (top-level NONE)."""
        (leave,) = self.pending(LeaveGroupRequest)
        members = tuple(
            LeaveGroupResponseMember(m.member_id, m.group_instance_id, error)
            for m in leave.message.members
        )
        return self.respond(leave, LeaveGroupResponse(Errors.NONE, members))

    def join_response(
        self,
        *,
        generation_id: int = 1,
        member_id: str = "m1",
        leader: str | None = None,
        others: Sequence[tuple[str, Sequence[str], Sequence[TopicPartition]]] = (),
        protocol: str | None = None,
        error: Errors = Errors.NONE,
    ) -> JoinGroupResponse:
        if error != Errors.NONE:
            return JoinGroupResponse(error, member_id=member_id)
        protocol = protocol or self.consumer.config.strategy_names[0]
        leader = member_id if leader is None else leader
        members = []
        if leader == member_id:
            own = self.last(JoinGroupRequest).message.protocols
            meta = next(p.metadata for p in own if p.name == protocol)
            members.append(JoinGroupResponseMember(member_id, self.config.group_instance_id, meta))
            for other_id, topics, owned in others:
                sub = Subscription(topics=tuple(topics), owned_partitions=tuple(owned))
                members.append(JoinGroupResponseMember(other_id, None, encode_subscription(sub)))
        return JoinGroupResponse(
            Errors.NONE,
            generation_id=generation_id,
            protocol_type="consumer",
            protocol_name=protocol,
            leader=leader,
            member_id=member_id,
            members=tuple(members),
        )

    def sync_response(self, partitions: Sequence[TopicPartition], error: Errors = Errors.NONE):
        if error != Errors.NONE:
            return SyncGroupResponse(error)
        return SyncGroupResponse(
            Errors.NONE,
            protocol_type="consumer",
            protocol_name=self.consumer.generation.protocol_name,
            assignment=encode_assignment(partitions),
        )

    def join_and_sync(self, partitions: Sequence[TopicPartition], **join_kwargs) -> None:
        """Answer the outstanding JoinGroup (as a follower unless told) and its SyncGroup."""
        join_kwargs.setdefault("leader", "someone-else")
        (req,) = self.pending(JoinGroupRequest)
        self.respond(req, self.join_response(**join_kwargs))
        (sync,) = self.pending(SyncGroupRequest)
        self.respond(sync, self.sync_response(partitions))

    # --- stand-ins for Kafka's test-only hooks ----------------------------------------------------

    def set_generation(self, generation: Generation) -> None:
        """Replace the member's generation by hand, as Kafka's test-only
        ``AbstractCoordinator.setNewGeneration`` does: it stands for whatever changed the
        generation while a request was in flight."""
        self.consumer.generation = generation

    def leave_group(self, reason: str):
        """``AbstractCoordinator.maybeLeaveGroup(reason)`` called directly, as Kafka's tests do
        (the consumer's own callers are close, unsubscribe and the poll timeout)."""
        return self._take(self.consumer.maybe_leave_group(reason, self.now))
