"""A tiny driver for KafkaCluster in tests: the simulation's Engine, client inboxes, a captured
event log.

It plays the runner's part: requests are delivered at once, SetTimer replaces a key, timers fire
in (deadline, set order) on ``scenarios.engine.Engine``, and every Send to a client lands in that
client's inbox.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Hashable

from coordinator.cluster import KafkaCluster
from coordinator.config import CoordinatorConfig
from coordinator.effects import CancelTimer, Send, SetTimer
from coordinator.errors import Errors
from coordinator.protocol import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    SyncGroupRequest,
    SyncGroupRequestAssignment,
)
from coordinator.records import Record
from coordinator.result import CoordinatorResult
from coordinator.shard import GroupCoordinatorShard
from scenarios.engine import Engine

_OWNER = "cluster"  # the engine's timers are per node; here one owner holds them all

# Kafka's own test context uses tiny timeouts; these mirror GroupMetadataManagerTestContext.
TEST_CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=10,
    group_max_session_timeout_ms=600000,
    group_initial_rebalance_delay_ms=3000,
    load_time_ms=0,
)


# The topics the coordinator tests commit offsets of. The broker accepts offsets only for topics
# and partitions it knows (KafkaApis.handleOffsetCommitRequest), so a Driver's cluster has these
# unless the test gives its own ``topics``.
TEST_TOPICS = {"t": 8, "foo": 8, "bar": 8, "topic": 8}


def protocols(*names: str, metadata: bytes = b"") -> tuple[JoinGroupRequestProtocol, ...]:
    return tuple(JoinGroupRequestProtocol(n, metadata or n.encode()) for n in names)


class Driver:
    def __init__(self, config: CoordinatorConfig = TEST_CONFIG, **cluster_args) -> None:
        self.events: list[dict] = []
        cluster_args.setdefault("topics", TEST_TOPICS)
        self.cluster = KafkaCluster(config=config, **cluster_args)
        self.engine = Engine(timer_handler=self._fire)
        self._fired: list[Send] = []
        self._floor = 0
        self._corr = itertools.count(1)
        self.inbox: dict[str, dict[int, list[object]]] = defaultdict(lambda: defaultdict(list))
        self.sent: list[Send] = []  # every Send, in order

    # --- effects -----------------------------------------------------------------------------

    def apply(self, result: CoordinatorResult) -> list[Send]:
        """Record the result's events (as the runner does), then carry out its effects."""
        for name, fields in result.events:
            self.events.append({**fields, "event": name})
        sends = []
        for e in result.effects:
            if isinstance(e, SetTimer):
                self.engine.set_timer(_OWNER, e.key, e.deadline_ms)
            elif isinstance(e, CancelTimer):
                self.engine.cancel_timer(_OWNER, e.key)
            elif isinstance(e, Send):
                self.inbox[e.dst][e.correlation_id].append(e.message)
                self.sent.append(e)
                sends.append(e)
        return sends

    @property
    def timers(self) -> dict[Hashable, int]:
        """The live timers: key -> deadline, in the order they were armed (the engine's own)."""
        return self.engine.pending(_OWNER)

    @property
    def now(self) -> int:
        return self.engine.now

    @now.setter
    def now(self, t_ms: int) -> None:
        """A test moves the clock without firing anything: timers due before then fire late."""
        self._floor = t_ms
        self.engine.now = t_ms

    def _fire(self, _owner: str, key: Hashable) -> None:
        if self.engine.now < self._floor:  # overtaken by a jump of the clock: it fires late
            self.engine.now = self._floor
        self._fired += self.apply(self.cluster.handle_timer(key, self.now))

    def advance(self, to_ms: int) -> list[Send]:
        """Fire every timer due up to ``to_ms`` (in order), then set the clock to ``to_ms``."""
        self._fired = []
        self.engine.run(until=to_ms)
        return self._fired

    def deadline(self, fragment: str) -> int | None:
        for key, deadline in self.timers.items():
            if fragment in str(key):
                return deadline
        return None

    # --- requests ----------------------------------------------------------------------------

    def coordinator(self, group_id: str) -> str:
        node = self.cluster.offsets_partition_leader(self.cluster.partition_for(group_id))
        assert node is not None
        return node

    def send(self, client: str, request, dst: str | None = None) -> tuple[int, list[object]]:
        """Deliver ``request`` now; returns (correlation id, the responses it got at once)."""
        corr = next(self._corr)
        dst = dst or self.coordinator(request.group_id)
        self.apply(self.cluster.handle_request(dst, client, corr, request, self.now))
        return corr, list(self.inbox[client].get(corr, []))

    def response(self, client: str, corr: int):
        """The single response to (client, corr), or None if it is still parked."""
        got = self.inbox[client].get(corr, [])
        assert len(got) <= 1, f"{client}/{corr} answered {len(got)} times"
        return got[0] if got else None

    def join(
        self,
        client: str,
        group_id: str = "g",
        member_id: str = "",
        *,
        names: tuple[str, ...] = ("range",),
        session: int = 10000,
        rebalance: int = 60000,
        instance_id: str | None = None,
        version: int = 9,
        protocol_type: str = "consumer",
        metadata: bytes = b"",
    ) -> int:
        req = JoinGroupRequest(
            group_id,
            session,
            rebalance,
            member_id,
            protocol_type,
            protocols(*names, metadata=metadata),
            group_instance_id=instance_id,
            api_version=version,
            client_id=client,
        )
        corr, _ = self.send(client, req)
        return corr

    def join_dynamic(self, client: str, group_id: str = "g", **kw) -> tuple[str, int]:
        """The two-step KIP-394 join; returns (member id, correlation id of the parked join)."""
        corr = self.join(client, group_id, **kw)
        first = self.response(client, corr)
        assert first.error_code == Errors.MEMBER_ID_REQUIRED, first
        corr2 = self.join(client, group_id, first.member_id, **kw)
        return first.member_id, corr2

    def sync(
        self,
        client: str,
        member_id: str,
        generation: int,
        group_id: str = "g",
        assignments: dict[str, bytes] | None = None,
        protocol_type: str | None = "consumer",
        protocol_name: str | None = "range",
        instance_id: str | None = None,
        version: int = 5,
    ) -> int:
        req = SyncGroupRequest(
            group_id,
            generation,
            member_id,
            group_instance_id=instance_id,
            protocol_type=protocol_type,
            protocol_name=protocol_name,
            assignments=tuple(
                SyncGroupRequestAssignment(m, a) for m, a in (assignments or {}).items()
            ),
            api_version=version,
        )
        corr, _ = self.send(client, req)
        return corr

    def heartbeat(
        self, client: str, member_id: str, generation: int, group_id: str = "g", instance_id=None
    ):
        _corr, got = self.send(
            client, HeartbeatRequest(group_id, generation, member_id, instance_id)
        )
        return got[0].error_code

    def leave(self, client: str, *identities: MemberIdentity, group_id: str = "g", version=5):
        _corr, got = self.send(client, LeaveGroupRequest(group_id, identities, api_version=version))
        return got[0]

    def commit(
        self,
        client: str,
        member_id: str,
        generation: int,
        offsets: dict[tuple[str, int], int],
        group_id: str = "g",
        instance_id: str | None = None,
        version: int = 9,
        metadata: str = "",
    ):
        topics: dict[str, list] = {}
        for (topic, p), off in offsets.items():
            topics.setdefault(topic, []).append(
                OffsetCommitRequestPartition(p, off, committed_metadata=metadata)
            )
        req = OffsetCommitRequest(
            group_id,
            generation,
            member_id,
            tuple(OffsetCommitRequestTopic(t, tuple(ps)) for t, ps in topics.items()),
            group_instance_id=instance_id,
            api_version=version,
        )
        _corr, got = self.send(client, req)
        return {
            (t.name, p.partition_index): p.error_code for t in got[0].topics for p in t.partitions
        }

    def complete_join(self, group_id: str = "g") -> None:
        """Advance through the join timer(s) until the join phase of ``group_id`` ends."""
        while self.state(group_id) == "PreparingRebalance":
            deadline = self.deadline(f"/join-{group_id}")
            assert deadline is not None, "join phase without a join timer"
            self.advance(deadline)

    def state(self, group_id: str = "g") -> str | None:
        view = self.cluster.group(group_id)
        return view.state if view else None

    # --- the coordinator's insides (for ports of Kafka's unit tests) ---------------------------

    def shard(self, group_id: str = "g") -> GroupCoordinatorShard:
        """The shard that coordinates ``group_id`` (on its partition's current leader)."""
        return self.cluster.service.shards[self.cluster.partition_for(group_id)]

    def create_group(self, group_id: str = "g") -> None:
        """GroupMetadataManager.getOrMaybeCreateClassicGroup(id, true): Empty, nothing written."""
        self.apply(self.shard(group_id).create_classic_group(group_id, self.now))

    def prepare_rebalance(self, reason: str, group_id: str = "g") -> list[Send]:
        """GroupMetadataManager.prepareRebalance(group, reason), as Kafka's tests call it."""
        return self.apply(self.shard(group_id).prepare_rebalance(group_id, reason, self.now))

    def force(self, *states: str, group_id: str = "g") -> None:
        """ClassicGroup.transitionTo as Kafka's tests call it: the state changes, nothing else."""
        model = self.shard(group_id).group_manager.groups[group_id].model
        for state in states:
            model.transition_to(state)

    def records(self, group_id: str = "g") -> tuple[Record, ...]:
        """Every record of ``group_id``'s ``__consumer_offsets`` partition, oldest first."""
        return self.cluster.offsets_log.partition(self.cluster.partition_for(group_id))

    def reload(self, group_id: str = "g") -> None:
        """Fail the coordinator of ``group_id``: the next replica replays the partition (load)."""
        self.apply(self.cluster.fail_broker(self.coordinator(group_id), self.now))
        if self.cluster.config.load_time_ms:
            self.advance(self.now + self.cluster.config.load_time_ms)

    def named(self, event: str) -> list[dict]:
        return [e for e in self.events if e["event"] == event]

    # --- common scenarios --------------------------------------------------------------------

    def stable_group(
        self, clients: tuple[str, ...] = ("A", "B"), group_id: str = "g", **kw
    ) -> tuple[dict[str, str], int]:
        """Members join at t=now, the initial delay elapses, everyone syncs: Stable."""
        ids = {}
        corrs = {}
        for c in clients:
            ids[c], corrs[c] = self.join_dynamic(c, group_id, **kw)
        self.complete_join(group_id)
        first = self.response(clients[0], corrs[clients[0]])
        assert first is not None and first.error_code == Errors.NONE, first
        gen = first.generation_id
        leader = self.cluster.group(group_id).leader_id
        for c in clients:
            self.sync(
                c,
                ids[c],
                gen,
                group_id,
                assignments={m: f"asg-{m}".encode() for m in ids.values()}
                if ids[c] == leader
                else None,
                protocol_name=first.protocol_name,
            )
        assert self.state(group_id) == "Stable"
        return ids, gen
