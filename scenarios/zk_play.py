"""Play a ``design: zookeeper`` scenario: the same file format, timeline rules and checks as
``scenarios.play``, on ``scenarios.zk_simulation.ZkSimulation`` (Kafka 0.8's consumers on a
simulated ZooKeeper) instead of the Kafka cluster.

A consumer of the file becomes one ``ZookeeperConsumerConnector``: its ``group``, ``topics`` and
settings (``num.streams``, ``rebalance.max.retries``, ``rebalance.backoff.ms``,
``zookeeper.session.timeout.ms``, ``zookeeper.server``, ``enable.auto.commit``,
``auto.commit.interval.ms``, ``partition.assignment.strategy``: ``range`` or ``roundrobin``).
Without ``zookeeper.server`` consumer number *i* (file order) connects to server ``zk-(i mod n)``
(ZkClient picks from the connect string; groupsim spreads them deterministically). The timeline's
``start``, ``close``, ``crash`` and ``add_partitions`` work as in the other designs, ``restart``,
``commit`` and ``network`` with 0.8's meaning (``ZkSimulation.restart``, ``.commit``,
``.partition_network``: a new connector, ``commitOffsets()``, a cut from ZooKeeper); so do the
checks ``members`` (the consumers registered under ``/consumers/<group>/ids`` on the leader),
``assignment``/``owns``/``sizes`` (the partitions each consumer fetches), ``events`` and
``measures``.
"""

from __future__ import annotations

from coordinator.placement import partition_for
from members.zk_consumer import ZkConsumerConfig
from scenarios.model import Scenario
from scenarios.play import Player
from scenarios.result import GroupResult, MemberResult
from scenarios.zk_simulation import ZkSimulation


class ZkPlayer(Player):
    """``Player`` with a ZooKeeper ensemble and 0.8 consumers in place of the Kafka cluster."""

    def __init__(self, scenario: Scenario, *, seed: int | None = None):
        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        zk = scenario.cluster.zookeeper
        servers = zk.servers if zk is not None else 3
        self.sim = ZkSimulation(  # type: ignore[assignment]
            topics={t.name: t.partitions for t in scenario.cluster.topics},
            servers=servers,
            lag_ms=dict(zk.lag_ms) if zk is not None else None,
            notify_latency_ms=scenario.cluster.network.latency_ms,
            brokers=scenario.cluster.brokers,
        )
        for i, spec in enumerate(scenario.consumers):
            cfg = spec.config
            strategy = next(iter(cfg.get("partition_assignment_strategy", ("range",))))
            self.sim.add_consumer(
                spec.id,
                ZkConsumerConfig(
                    group_id=spec.group,
                    consumer_id=spec.id,
                    topics=tuple(spec.topics),
                    num_streams=int(cfg.get("num_streams", 1)),
                    partition_assignment_strategy=strategy,
                    rebalance_max_retries=int(cfg.get("rebalance_max_retries", 4)),
                    rebalance_backoff_ms=int(cfg.get("rebalance_backoff_ms", 2000)),
                    zookeeper_session_timeout_ms=int(cfg.get("zookeeper_session_timeout_ms", 6000)),
                    auto_commit_enable=bool(cfg.get("enable_auto_commit", True)),
                    auto_commit_interval_ms=int(cfg.get("auto_commit_interval_ms", 60_000)),
                    zookeeper_server=str(cfg.get("zookeeper_server", f"zk-{i % servers}")),
                    rtt_ms=2 * scenario.cluster.network.latency_ms,
                ),
            )
        self.raw = {}
        self.last_join = {}
        self.raw_steps = []
        self.results = []

    @property
    def zk_sim(self) -> ZkSimulation:
        assert isinstance(self.sim, ZkSimulation)
        return self.sim

    def member_names(self, group: str | None) -> list[str]:
        if group is None:
            return []
        registered = set(self.zk_sim.registry(group))
        return [
            cid for cid, c in self.zk_sim.consumers.items() if c.consumer_id_string in registered
        ]

    def group_results(self) -> tuple[GroupResult, ...]:
        sim = self.zk_sim
        out = []
        for gid in self.scenario.groups:
            members = [
                MemberResult(
                    consumer=cid,
                    member_id=sim.consumers[cid].consumer_id_string,
                    group_instance_id=None,
                    client_state=None,
                    assignment=tuple(str(tp) for tp in sim.assignment(cid)),
                )
                for cid in sorted(self.member_names(gid))
            ]
            strategies = {
                c.config.partition_assignment_strategy
                for c in sim.consumers.values()
                if c.group == gid
            }
            out.append(
                GroupResult(
                    group_id=gid,
                    state=None,
                    generation=None,
                    leader=None,
                    leader_member_id=None,
                    protocol=",".join(sorted(strategies)) or None,
                    coordinator=None,
                    offsets_partition=partition_for(gid, self.scenario.cluster.offsets_partitions),
                    members=tuple(members),
                )
            )
        return tuple(out)
