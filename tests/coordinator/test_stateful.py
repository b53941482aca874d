"""Hypothesis stateful test: random joins, syncs, heartbeats, leaves, commits, crashes, time jumps.

Invariants checked after every step (Kafka's, not the implementation's):
* a group's generation never decreases while one coordinator keeps it (failover may bring back
  the last *persisted* generation), and the persisted generation never decreases;
* the leader is a member (no leader iff no members);
* in CompletingRebalance and Stable every member supports the chosen protocol;
* Dead is absorbing; every transition is one of Kafka's;
* every request is answered at most once, and when a join phase ends nobody is left parked in
  JoinGroup; when the leader's assignment is persisted nobody is left parked in SyncGroup.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from coordinator.config import CoordinatorConfig
from coordinator.errors import Errors
from coordinator.protocol import (
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    MemberIdentity,
    SyncGroupResponse,
)
from coordinator.records import GroupMetadataKey
from coordinator.state_machine import is_valid_transition

from .harness import Driver

CONFIG = CoordinatorConfig(
    group_min_session_timeout_ms=10,
    group_max_session_timeout_ms=100000,
    group_initial_rebalance_delay_ms=300,
    group_max_size=5,
    load_time_ms=50,
)
CLIENTS = ("C0", "C1", "C2", "C3", "S0", "S1")  # S* are static members
PROTOCOL_LISTS = (("range",), ("range", "roundrobin"), ("roundrobin", "range"), ("roundrobin",))


class Client:
    def __init__(self, name: str) -> None:
        self.name = name
        self.instance_id = name.lower() if name.startswith("S") else None
        self.member_id = ""
        self.generation = -1
        self.members: tuple[str, ...] = ()
        self.names: tuple[str, ...] = ("range",)
        self.needs_sync = False
        self.protocol: str | None = None
        self.needs_rejoin = False
        self.outstanding: int | None = None  # correlation id of a parked Join/Sync


class CoordinatorMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.d = Driver(CONFIG, num_brokers=3)
        self.clients = {c: Client(c) for c in CLIENTS}
        self.seen_sends = 0
        self.seen_events = 0
        self.last_generation: int | None = None
        self.last_coordinator: str | None = None
        self.persisted_generation = -1
        self.seen_records = 0
        self.lost: set[int] = set()

    # --- client bookkeeping ------------------------------------------------------------------

    def absorb(self) -> None:
        for send in self.d.sent[self.seen_sends :]:
            client = self.clients.get(send.dst)
            if client is None:
                continue
            m = send.message
            if send.correlation_id == client.outstanding:
                client.outstanding = None
            if getattr(m, "error_code", None) == Errors.REBALANCE_IN_PROGRESS:
                client.needs_rejoin = True
            if isinstance(m, SyncGroupResponse):
                client.needs_sync = False
            if isinstance(m, JoinGroupResponse):
                if m.error_code == Errors.NONE:
                    client.member_id, client.generation = m.member_id, m.generation_id
                    client.members = tuple(x.member_id for x in m.members)
                    client.protocol = m.protocol_name
                    client.needs_sync, client.needs_rejoin = True, False
                elif m.error_code == Errors.MEMBER_ID_REQUIRED:
                    client.member_id = m.member_id
                    client.needs_rejoin = True
                elif m.error_code in (Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID):
                    client.member_id, client.generation = "", -1
            elif isinstance(m, (SyncGroupResponse, HeartbeatResponse)):
                if m.error_code in (
                    Errors.UNKNOWN_MEMBER_ID,
                    Errors.ILLEGAL_GENERATION,
                    Errors.FENCED_INSTANCE_ID,
                ):
                    client.member_id, client.generation = "", -1
            elif isinstance(m, LeaveGroupResponse):
                pass
        self.seen_sends = len(self.d.sent)

    def coordinator_alive(self) -> bool:
        p = self.d.cluster.partition_for("g")
        return self.d.cluster.offsets_partition_leader(p) is not None

    # --- rules -------------------------------------------------------------------------------

    @rule(
        c=st.sampled_from(CLIENTS),
        names=st.sampled_from(PROTOCOL_LISTS),
        session=st.sampled_from([500, 2000]),
        rebalance=st.sampled_from([400, 3000]),
    )
    def join(self, c, names, session, rebalance):
        if not self.coordinator_alive():
            return
        client = self.clients[c]
        client.names = names
        self._join(client, session, rebalance)

    def _join(self, client: Client, session: int = 2000, rebalance: int = 3000) -> None:
        client.needs_rejoin = False
        client.outstanding = self.d.join(
            client.name,
            member_id=client.member_id,
            names=client.names,
            session=session,
            rebalance=rebalance,
            instance_id=client.instance_id,
        )
        self.absorb()

    @rule(c=st.sampled_from(CLIENTS))
    def sync(self, c):
        client = self.clients[c]
        if not self.coordinator_alive() or not client.member_id or client.generation < 0:
            return
        self._sync(client)

    def _sync(self, client: Client) -> None:
        assignments = {m: m.encode() for m in client.members} if client.members else None
        client.outstanding = self.d.sync(
            client.name,
            client.member_id,
            client.generation,
            assignments=assignments,
            protocol_name=client.protocol,
            instance_id=client.instance_id,
        )
        self.absorb()

    @rule(dt=st.sampled_from([100, 300, 700, 1500]))
    def well_behaved_clients(self, dt):
        """Every client in the group acts like a consumer loop once, then time passes."""
        if self.coordinator_alive():
            for client in self.clients.values():
                if client.outstanding is not None or not client.member_id:
                    continue
                if client.needs_rejoin:
                    self._join(client)
                elif client.needs_sync:
                    self._sync(client)
                elif client.generation >= 0:
                    self.d.heartbeat(
                        client.name,
                        client.member_id,
                        client.generation,
                        instance_id=client.instance_id,
                    )
                    self.absorb()
        self.d.advance(self.d.now + dt)
        self.absorb()

    @rule(c=st.sampled_from(CLIENTS))
    def heartbeat(self, c):
        client = self.clients[c]
        if self.coordinator_alive() and client.member_id:
            self.d.heartbeat(c, client.member_id, client.generation, instance_id=client.instance_id)
            self.absorb()

    @rule(c=st.sampled_from(CLIENTS))
    def leave(self, c):
        client = self.clients[c]
        if self.coordinator_alive() and client.member_id:
            self.d.leave(c, MemberIdentity(client.member_id, client.instance_id))
            client.member_id, client.generation = "", -1
            self.absorb()

    @rule()
    def leave_while_parked(self):
        """The first client with a parked Join/Sync leaves (its parked request must be settled)."""
        for client in self.clients.values():
            if client.outstanding is not None and client.member_id and self.coordinator_alive():
                self.d.leave(client.name, MemberIdentity(client.member_id, client.instance_id))
                client.member_id, client.generation = "", -1
                self.absorb()
                return

    @rule(c=st.sampled_from(CLIENTS), offset=st.integers(0, 100))
    def commit(self, c, offset):
        client = self.clients[c]
        if self.coordinator_alive():
            self.d.commit(
                c,
                client.member_id,
                client.generation,
                {("t", 0): offset},
                instance_id=client.instance_id,
            )
            self.absorb()

    @rule(dt=st.sampled_from([1, 50, 200, 400, 1000, 2500, 6000]))
    def time_passes(self, dt):
        self.d.advance(self.d.now + dt)
        self.absorb()

    @rule(
        action=st.sampled_from(
            ["crash-0", "crash-1", "crash-2", "restart-0", "restart-1", "restart-2", "elect"]
            + ["calm"] * 7
        )
    )
    def chaos(self, action):
        """Broker failures, restarts and preferred-leader elections (half the time: nothing)."""
        kind, _, which = action.partition("-")
        cluster = self.d.cluster
        if kind == "crash":
            node = cluster.broker_nodes[int(which)]
            # requests parked on a broker that dies are never answered (connections break)
            self.lost |= self.parked_now(node)
            self.d.apply(cluster.fail_broker(node, self.d.now))
        elif kind == "restart":
            self.d.apply(cluster.restart_broker(cluster.broker_nodes[int(which)], self.d.now))
        elif kind == "elect":
            self.d.apply(cluster.elect_preferred_leaders(self.d.now))
        self.absorb()

    # --- invariants --------------------------------------------------------------------------

    @invariant()
    def generation_never_decreases(self):
        view = self.d.cluster.group("g")
        coordinator = view.coordinator if view else None
        if view is not None and coordinator is not None:
            if (
                self.last_generation is not None
                and coordinator == self.last_coordinator
                and not self._reloaded_since_last_check()
            ):
                assert view.generation_id >= self.last_generation
            self.last_generation = view.generation_id
            self.last_coordinator = coordinator
        p = self.d.cluster.partition_for("g")
        records = self.d.cluster.offsets_log.partition(p)
        new_records, self.seen_records = records[self.seen_records :], len(records)
        for record in new_records:
            if not isinstance(record.key, GroupMetadataKey):
                continue
            if record.value is None:  # deleted: a new group starts again at 0
                self.persisted_generation = -1
                continue
            assert record.value.generation >= self.persisted_generation
            self.persisted_generation = record.value.generation

    def _reloaded_since_last_check(self) -> bool:
        new_events = self.d.events[self.seen_events :]
        return any(e["event"] in ("partition_loaded", "group_deleted") for e in new_events)

    @invariant()
    def leader_is_a_member(self):
        view = self.d.cluster.group("g")
        if view is None:
            return
        if view.members:
            assert view.leader_id in view.member_ids
        else:
            assert view.leader_id is None

    @invariant()
    def protocol_supported_by_everyone(self):
        view = self.d.cluster.group("g")
        if view is not None and view.state in ("CompletingRebalance", "Stable"):
            for m in view.members:
                assert view.protocol_name in [n for n, _ in m.protocols]

    @invariant()
    def transitions_are_legal_and_dead_is_absorbing(self):
        for e in self.d.events[self.seen_events :]:
            if e["event"] == "group_state_changed":
                assert is_valid_transition(e["state_from"], e["state_to"])
                if e["state_from"] == "Dead":
                    assert e["state_to"] == "Dead"
        self.seen_events = len(self.d.events)

    def parked_now(self, node: str | None = None) -> set[int]:
        """Correlation ids of the Join/Sync requests parked in the coordinator right now."""
        parked = set()
        for shard in self.d.cluster._shards.values():
            if node is not None and shard.node != node:
                continue
            for group in shard.group_manager.groups.values():
                for m in group.members.values():
                    for waiter in (m.join_waiter, m.sync_waiter):
                        if waiter is not None:
                            parked.add(waiter.correlation_id)
        return parked

    @invariant()
    def every_join_and_sync_is_accounted_for(self):
        """Answered once, parked, dropped the way Kafka drops it, or lost with its broker."""
        asked = {
            e["correlation_id"]
            for e in self.d.events
            if e["event"] == "request_received" and e["api"] in ("JoinGroup", "SyncGroup")
        }
        answered = {send.correlation_id for send in self.d.sent}
        dropped = {
            e["correlation_id"]
            for e in self.d.events
            if e["event"] in ("join_dropped", "sync_dropped")
        }
        parked = self.parked_now()
        assert not (parked & answered)
        assert not (parked & dropped)
        assert asked <= answered | dropped | parked | self.lost, sorted(
            asked - answered - dropped - parked - self.lost
        )

    @invariant()
    def parked_requests(self):
        for client in self.d.inbox.values():
            for corr, responses in client.items():
                assert len(responses) <= 1, (corr, responses)
        view = self.d.cluster.group("g")
        if view is None:
            return
        if view.state in ("CompletingRebalance", "Stable", "Empty"):
            assert not any(m.awaiting_join for m in view.members)
        if view.state in ("PreparingRebalance", "Stable", "Empty"):
            assert not any(m.awaiting_sync for m in view.members)
        if view.state == "Empty":
            assert view.members == ()


CoordinatorMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCoordinatorStateful = CoordinatorMachine.TestCase


def test_seeded_random_walks_keep_every_invariant():
    """Cheap breadth on top of Hypothesis: seeded random walks over the same rules."""
    import random

    rng = random.Random(20241025)
    checks = (
        "generation_never_decreases",
        "leader_is_a_member",
        "protocol_supported_by_everyone",
        "transitions_are_legal_and_dead_is_absorbing",
        "parked_requests",
        "every_join_and_sync_is_accounted_for",
    )
    reached: set[str] = set()
    for _ in range(60):
        m = CoordinatorMachine()
        for _ in range(50):
            c = rng.choice(CLIENTS)
            rule_name = rng.choice(
                [
                    "join",
                    "sync",
                    "heartbeat",
                    "leave",
                    "parked_leave",
                    "commit",
                    "time",
                    "well",
                    "well",
                    "chaos",
                ]
            )
            if rule_name == "join":
                m.join(c, rng.choice(PROTOCOL_LISTS), rng.choice([500, 2000]), 3000)
            elif rule_name == "sync":
                m.sync(c)
            elif rule_name == "heartbeat":
                m.heartbeat(c)
            elif rule_name == "leave":
                m.leave(c)
            elif rule_name == "parked_leave":
                m.leave_while_parked()
            elif rule_name == "commit":
                m.commit(c, rng.randrange(100))
            elif rule_name == "time":
                m.time_passes(rng.choice([1, 50, 200, 400, 1000, 2500, 6000]))
            elif rule_name == "well":
                m.well_behaved_clients(rng.choice([100, 300, 700, 1500]))
            else:
                m.chaos(rng.choice(["crash-0", "crash-1", "restart-0", "restart-1", "calm"]))
            for check in checks:
                getattr(m, check)()
        reached |= {e["state_to"] for e in m.d.events if e["event"] == "group_state_changed"}
    # the walks really exercise the whole machine
    assert reached == {"PreparingRebalance", "CompletingRebalance", "Stable", "Empty", "Dead"}
