"""A Hypothesis state machine over the whole ``Simulation``: consumers, coordinator, network, brokers.

Each example builds one group of four consumers (each static or dynamic) on three brokers, with
one of the four client assignors (range, roundrobin, sticky, cooperative-sticky), then runs a
random sequence of: start, close, crash, restart, stall, subscription changes, added partitions,
message loss, network splits, broker failures and restarts, and the passing of time. After every
step the invariant checker (``scenarios.invariants``) must have found no violation (its
anomalies, which Kafka allows, are fine). When the sequence ends the faults stop (network healed,
no loss, every broker back) and the group must settle: every running consumer STABLE in the
group's generation, and every partition owned at most once, by a running consumer that
subscribes to its topic, and each partition of a subscribed topic owned by someone.

Kafka-faithful exceptions to "owned by someone" (documented in docs/runner.md#stress):

* **KAFKA-12759**: a static member that comes back (restart, or start after close) while the group
  is Stable, with a subscription changed since its last join, takes the coordinator's static
  replacement path (``GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin``): the
  selected protocol does not change, so no rebalance; it gets its old assignment and its new
  topics stay unassigned until something else rebalances the group. Topics whose only running
  subscribers are such members are not required to be owned.
* Added partitions are assigned only once the leader's metadata refresh notices them
  (``metadata.max.age.ms``, 5 minutes by default), so the check waits that long after the faults.
* A consumer that failed fatally (``consumer.failed``, e.g. FENCED_INSTANCE_ID for a static
  member replaced by its own restart) is not live: Kafka's poll() throws and the application
  stops; its partitions are not required of it.

``make test`` runs a few short examples (derandomized, so the suite is deterministic);
``make stress`` (GROUPSIM_STRESS=1) runs many long ones with random seeds.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from scenarios.simulation import Simulation
from tests.sim.helpers import FAST, FAST_BROKER

ASSIGNORS = ("range", "roundrobin", "sticky", "cooperative-sticky")
CONSUMERS = ("C1", "C2", "C3", "C4")
BROKERS = ("broker-0", "broker-1", "broker-2")
TOPICS = ("t0", "t1")
MAX_PARTITIONS = 6
STRESS = os.environ.get("GROUPSIM_STRESS") == "1"
STRESS_EXAMPLES = int(os.environ.get("GROUPSIM_STRESS_EXAMPLES", "300"))

consumer_ids = st.sampled_from(CONSUMERS)
subscriptions = st.sets(st.sampled_from(TOPICS), min_size=1).map(sorted)


class SimulationMachine(RuleBasedStateMachine):
    sim: Simulation

    def __init__(self) -> None:
        super().__init__()
        self.static: dict[str, bool] = {}
        self.topics: dict[str, list[str]] = {}
        # static consumers whose subscription changed since they last joined (KAFKA-12759)
        self.changed_static: set[str] = set()
        self.down: set[str] = set()  # failed brokers

    @initialize(
        assignor=st.sampled_from(ASSIGNORS),
        static=st.tuples(*(st.booleans() for _ in CONSUMERS)),
        topics=st.tuples(*(subscriptions for _ in CONSUMERS)),
        seed=st.integers(0, 2**16),
    )
    def build(
        self, assignor: str, static: tuple[bool, ...], topics: tuple[list[str], ...], seed: int
    ) -> None:
        self.sim = Simulation(
            brokers=len(BROKERS),
            topics={"t0": 3, "t1": 2},
            coordinator_config=FAST_BROKER,
            seed=seed,
            log_level="info",
            check_invariants=True,
        )
        for cid, is_static, subscribed in zip(CONSUMERS, static, topics, strict=True):
            self.static[cid] = is_static
            self.topics[cid] = list(subscribed)
            self.sim.add_consumer(
                cid,
                group_id="g",
                topics=subscribed,
                partition_assignment_strategy=[assignor],
                group_instance_id=f"inst-{cid}" if is_static else None,
                **FAST,
            )
        self.sim.start()

    # -- helpers ------------------------------------------------------------------------------

    def _slot(self, cid: str) -> Any:
        return self.sim._consumers[cid]

    def _live(self, cid: str) -> bool:
        slot = self._slot(cid)
        return slot.running and not slot.closed and not getattr(slot.consumer, "failed", False)

    # -- consumers ----------------------------------------------------------------------------

    @rule(cid=consumer_ids)
    def start(self, cid: str) -> None:
        slot = self._slot(cid)
        if slot.running and (not slot.closed or self.sim.status(cid) == "CLOSING"):
            return  # running, or still closing (refused by start)
        self.sim.start(cid)

    @rule(cid=consumer_ids)
    def close(self, cid: str) -> None:
        if self._slot(cid).running and not self._slot(cid).closed:
            self.sim.close(cid)

    @rule(cid=consumer_ids)
    def crash(self, cid: str) -> None:
        if self._slot(cid).running:
            self.sim.crash(cid)

    @rule(cid=consumer_ids)
    def restart(self, cid: str) -> None:
        self.sim.restart(cid)

    @rule(cid=consumer_ids, ms=st.integers(0, 40_000))
    def stall(self, cid: str, ms: int) -> None:
        if self._live(cid):
            self.sim.stall(cid, ms)

    @rule(cid=consumer_ids, topics=subscriptions)
    def subscribe(self, cid: str, topics: list[str]) -> None:
        if not self._live(cid) or topics == self.topics[cid]:
            return
        self.topics[cid] = topics
        self.sim.subscribe(cid, topics)
        if self.static[cid]:
            self.changed_static.add(cid)

    # -- cluster and network ------------------------------------------------------------------

    @rule(topic=st.sampled_from(TOPICS))
    def add_partition(self, topic: str) -> None:
        now = self.sim.cluster.topics()[topic]
        if now < MAX_PARTITIONS:
            self.sim.add_partitions(topic, now + 1)

    @rule(probability=st.sampled_from((0.05, 0.2)), ms=st.integers(1_000, 20_000))
    def lose_messages(self, probability: float, ms: int) -> None:
        network = self.sim.network
        network.config = attrs.evolve(network.config, drop_probability=probability)
        self.sim.after(ms, self._stop_loss)

    def _stop_loss(self) -> None:
        network = self.sim.network
        network.config = attrs.evolve(network.config, drop_probability=0.0)

    @rule(
        nodes=st.sets(st.sampled_from(CONSUMERS + BROKERS), min_size=1, max_size=3),
        ms=st.integers(1_000, 30_000),
    )
    def split(self, nodes: set[str], ms: int) -> None:
        self.sim.partition_network([sorted(nodes)], ms)

    @rule(broker=st.sampled_from(BROKERS))
    def fail_broker(self, broker: str) -> None:
        if broker not in self.down:
            self.down.add(broker)
            self.sim.fail_broker(broker)

    @rule(broker=st.sampled_from(BROKERS))
    def restart_broker(self, broker: str) -> None:
        if broker in self.down:
            self.down.discard(broker)
            self.sim.restart_broker(broker)

    @rule(ms=st.integers(1, 20_000))
    def advance(self, ms: int) -> None:
        self.sim.run_for(ms)

    # -- checks -------------------------------------------------------------------------------

    @invariant()
    def no_violation(self) -> None:
        if hasattr(self, "sim"):
            assert self.sim.violations == [], self.sim.violations

    def teardown(self) -> None:
        if not hasattr(self, "sim"):
            return
        sim = self.sim
        self._stop_loss()
        sim.heal_network()
        for broker in sorted(self.down):
            sim.restart_broker(broker)
        self.down.clear()
        # stalls end, lost requests time out, closes finish, and the leader's metadata refresh
        # (metadata.max.age.ms, 5 min) notices added partitions: Kafka rebalances only then
        sim.run_for(310_000)
        live = [c for c in CONSUMERS if self._live(c)]
        if not live:
            assert sim.run_until(lambda: not sim.members("g"), 120_000), sim.describe_groups(["g"])
            return
        settled = sim.run_until_stable("g", 600_000)
        assert settled, settled
        assert sim.violations == [], sim.violations
        self._check_ownership(live)

    def _check_ownership(self, live: list[str]) -> None:
        sim = self.sim
        owner: dict[str, str] = {}
        for cid in live:
            for tp in sim.assignment(cid):
                assert str(tp) not in owner, f"{tp} owned by {owner.get(str(tp))} and {cid}"
                assert tp.topic in self.topics[cid], f"{cid} owns {tp}, not subscribed"
                owner[str(tp)] = cid
        partitions = sim.cluster.topics()
        exempt = self._kafka_12759_topics(live)
        for topic in sorted({t for c in live for t in self.topics[c]} - exempt):
            for p in range(partitions[topic]):
                assert f"{topic}-{p}" in owner, (
                    f"{topic}-{p} has no owner; {sim.describe_groups(['g'])}; owners {owner}"
                )

    def _kafka_12759_topics(self, live: list[str]) -> set[str]:
        """Topics whose only live subscribers are static members that rejoined with a changed
        subscription (they may come back without a rebalance: KAFKA-12759)."""
        out = set()
        for topic in TOPICS:
            subscribers = [c for c in live if topic in self.topics[c]]
            if subscribers and all(c in self.changed_static for c in subscribers):
                out.add(topic)
        return out


SimulationMachine.TestCase.settings = settings(
    max_examples=STRESS_EXAMPLES if STRESS else 6,
    stateful_step_count=50 if STRESS else 12,
    deadline=None,
    derandomize=not STRESS,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    # GROUPSIM_STRESS_SHRINK=0: report the first failing sequence as found (shrinking a long
    # simulation can take many minutes)
    phases=[
        p for p in Phase if p is not Phase.shrink or os.environ.get("GROUPSIM_STRESS_SHRINK") != "0"
    ],
)

TestSimulationMachine = SimulationMachine.TestCase
