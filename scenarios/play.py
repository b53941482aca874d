"""Drive a validated Scenario through ``scenarios.simulation.Simulation``.

Time rules (docs/scenarios.md): the run visits every time point of the timeline and of the
expectations in order. At a point ``t`` it first runs every simulation event due at or before
``t``, then applies the timeline steps at ``t`` in file order, then evaluates the expectations at
``t``. After the last point it runs on to the end (``until``, ``--until``, or the last point +
30 s) and evaluates the ``at: end`` expectations. Anything a step sends arrives one network latency
later, so an expectation at the same ``t`` sees a step's local effect (a crash) but not yet the
coordinator's reaction. Each step applies itself (``scenarios.actions``) and each check
evaluates itself (``scenarios.checks``).

Never raises for a bad run: a simulator exception ends the run and lands in ``RunResult.error``
(the Spark sweeps rely on this), with the events logged so far.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from coordinator import events as ev
from coordinator.placement import partition_for
from scenarios.actions import ScenarioRuntimeError, Send
from scenarios.checks import client_state, tp_key
from scenarios.history import unowned_by_group
from scenarios.measures import design_measures
from scenarios.model import Action, Expectation, Scenario
from scenarios.raw import RawStep, decode_assignment
from scenarios.result import (
    CheckResult,
    ExpectationResult,
    GroupResult,
    MemberResult,
    RunResult,
)

__all__ = ["Player", "Progress", "ScenarioRuntimeError", "play"]

Progress = Callable[[int, int], None]  # (simulated now ms, simulated end ms), for a display
PROGRESS_SLICE_MS = 60_000


class Player:
    """One run of one scenario: the simulation plus what the scenario needs to check it."""

    def __init__(self, scenario: Scenario, *, seed: int | None = None):
        from coordinator.config import CoordinatorConfig
        from scenarios.network import NetworkConfig
        from scenarios.simulation import Simulation

        self.scenario = scenario
        self.seed = scenario.seed if seed is None else seed
        c = scenario.cluster
        from functools import partial

        from coordinator.cluster import KafkaCluster

        self.sim = Simulation(
            # Simulation has no replication-factor parameter; the cluster does
            cluster_factory=partial(KafkaCluster, replication_factor=c.replication_factor),
            brokers=c.brokers,
            topics={t.name: t.partitions for t in c.topics},
            coordinator_config=CoordinatorConfig(
                **dict(c.config), server_assignor=self._server_assignor()
            ),
            broker_racks=c.broker_racks,
            seed=self.seed,
            network=NetworkConfig(
                latency_ms=c.network.latency_ms,
                jitter_ms=c.network.jitter_ms,
                drop_probability=c.network.drop_rate,
            ),
            check_invariants=True,
        )
        self._add_consumers()
        self.raw: dict[str, RawStep] = {}
        # raw client -> (time, its latest successful JoinGroup response)
        self.last_join: dict[str, tuple[int, Any]] = {}
        self.raw_steps: list[RawStep] = []
        self.results: list[ExpectationResult] = []

    # -- set-up -------------------------------------------------------------------------------

    def _server_assignor(self) -> Any:
        """Design 2 (``design: coordinator-assigns``): the brokers' strategy, run by the
        coordinator on the cluster's topics as they are then; None for today's protocol."""
        name = self.scenario.cluster.server_assignor
        return None if name is None else self.server_assignor_named(name)

    def server_assignor_named(self, name: str) -> Any:
        """The broker strategy ``name`` (``range``, ``roundrobin``, ``sticky``) as the coordinator
        runs it; a broker restarted with a new strategy gets its own (``restart_broker``)."""
        from scenarios.server_assignor import server_assignor

        return server_assignor(name, lambda: self.sim.cluster.topics())

    @staticmethod
    def consumer_config(fields: Mapping[str, Any]) -> Any:
        """A ``members.config.ConsumerConfig`` from a spec's merged settings (the 0.8 legacy
        strategies adapted to member-keyed assignment); a ``restart:`` with settings uses it too."""
        from members.config import ConsumerConfig

        names = {f.name for f in attrs.fields(ConsumerConfig)}
        kwargs = {k: v for k, v in fields.items() if k in names}
        if "partition_assignment_strategy" in kwargs:
            kwargs["partition_assignment_strategy"] = tuple(
                _member_keyed(name) for name in kwargs["partition_assignment_strategy"]
            )
        return ConsumerConfig(**kwargs)

    def _add_consumers(self) -> None:
        for spec in self.scenario.consumers:
            self.sim.add_consumer(
                spec.id,
                self.consumer_config(spec.config),
                topics=list(spec.topics) if spec.pattern is None else None,
                pattern=spec.pattern,
            )

    # -- the run ------------------------------------------------------------------------------

    _progress: Progress | None = None
    current_action: Action | None = None  # the step being applied (a refusal names it)

    def _advance(self, t: int, end: int) -> None:
        """Run to ``t``; with a progress callback, in slices of simulated time (same events)."""
        if self._progress is None:
            self.sim.run(until=t)
            return
        while True:
            self.sim.run(until=min(t, self.sim.now + PROGRESS_SLICE_MS))
            self._progress(self.sim.now, end)
            if self.sim.now >= t:
                return

    def play(self, until_ms: int | None, progress: Progress | None = None) -> None:
        end = until_ms if until_ms is not None else self.scenario.end_ms
        self._progress = progress
        points = sorted(
            {a.at_ms for a in self.scenario.timeline if a.at_ms <= end}
            | {e.at_ms for e in self.scenario.expect if e.at_ms is not None and e.at_ms <= end}
        )
        for t in points:
            self._advance(t, end)
            for action in self.scenario.timeline:
                if action.at_ms == t:
                    self.current_action = action  # named by a refusal (play's error message)
                    self.apply(action)
                    self.current_action = None
            for exp in self.scenario.expect:
                if exp.at_ms == t:
                    self.results.append(self.evaluate(exp))
        if end > self.sim.now:
            self._advance(end, end)
        for exp in self.scenario.expect:
            if exp.at_ms is None:
                self.results.append(self.evaluate(exp))
            elif exp.at_ms > end:
                self.results.append(
                    ExpectationResult(
                        label=_label(exp),
                        at_ms=exp.at_ms,
                        group=exp.group,
                        where=str(exp.where),
                        checks=(
                            CheckResult(
                                "reached", f"t={exp.at_ms}ms", f"run stopped at {end}ms", False
                            ),
                        ),
                    )
                )
        for step in self.raw_steps:
            if step.action.expect is not None:
                send = step.action.args
                assert isinstance(send, Send)
                self.results.append(send.check_response(self, step))

    def apply(self, action: Action) -> None:
        """Carry out one timeline step (its kind's ``apply``, scenarios.actions)."""
        if action.note is not None:
            self.sim.log.append(
                ev.SCENARIO_NOTE, t_ms=self.sim.now, node="scenario", note=action.note
            )
        action.args.apply(self, action)

    def broker(self, ref: str | Mapping[str, str], action: Action) -> str:
        if isinstance(ref, str):
            return ref
        group = ref["coordinator_of"]
        node = self.sim.coordinator(group)
        if node is None:
            raise ScenarioRuntimeError(
                f"{action.where}: group {group} has no live coordinator at {self.sim.now}ms"
            )
        return node

    # -- expectations -------------------------------------------------------------------------

    def evaluate(self, exp: Expectation) -> ExpectationResult:
        sim = self.sim
        g = exp.group
        checks: list[CheckResult] = []
        for key, check in exp.checks.items():
            try:
                checks.extend(check.evaluate(self, g))
            except Exception as exc:  # a query failing is a failed check, not a crash
                checks.append(CheckResult(key, check.shown(), f"error: {exc}", False))
        return ExpectationResult(
            label=_label(exp) + (f" [t={sim.now}ms]" if exp.at_ms is None else ""),
            at_ms=exp.at_ms if exp.at_ms is not None else sim.now,
            group=g,
            where=str(exp.where),
            checks=tuple(checks),
        )

    def consumer_of(self, member_id: str, instance_id: str | None) -> str | None:
        """The scenario consumer behind a member id; a static member is also known by its
        group.instance.id (its member id is forgotten by a stopped consumer)."""
        cid = self.sim.consumer_for_member(member_id)
        if cid is None and instance_id is not None:
            for spec in self.scenario.consumers:
                if spec.config.get("group_instance_id") == instance_id:
                    return spec.id
        return cid

    def member_names(self, group: str | None) -> list[str]:
        """The group's members as consumer ids: a classic group's, or a KIP-848 consumer
        group's (the members the coordinator holds, ConsumerGroup.members(): joined with
        epoch 0 and not yet left with -1 nor fenced; a static member at -2 is kept)."""
        view = self.sim.group(group) if group else None
        if view is None:
            modern = self.sim.cluster.consumer_group(group) if group else None
            if modern is None:
                return []
            return [
                self.consumer_of(m.member_id, m.instance_id) or m.member_id for m in modern.members
            ]
        return [
            self.consumer_of(m.member_id, m.group_instance_id) or m.member_id for m in view.members
        ]

    def error_count(self, name: str, group: str | None = None) -> int:
        """How many coordinator responses carried error ``name`` (for ``group``, or no group)."""
        return sum(
            1
            for e in self.sim.events
            if e.get("event") == ev.RESPONSE_SENT
            and e.get("error") == name
            and (group is None or e.get("group_id") in (group, None))
        )

    # -- the result ---------------------------------------------------------------------------

    def _consumer_group_result(self, gid: str, partitions: int) -> GroupResult | None:
        """A KIP-848 consumer group (KafkaCluster.consumer_group): its state, its group epoch
        (as ``generation``), protocol ``consumer``, each member's current assignment."""
        sim = self.sim
        view = sim.cluster.consumer_group(gid)
        if view is None:
            return None
        members = [_modern_member_result(self, m) for m in view.members]
        members.sort(key=lambda m: (m.consumer is None, m.consumer or m.member_id))
        return GroupResult(
            group_id=gid,
            state=view.state,
            generation=view.group_epoch,
            leader=None,
            leader_member_id=None,
            protocol="consumer",
            coordinator=sim.coordinator(gid),
            offsets_partition=partition_for(gid, partitions),
            members=tuple(members),
        )

    def group_results(self) -> tuple[GroupResult, ...]:
        sim = self.sim
        groups = list(self.scenario.groups)
        for step in self.raw_steps:
            send = step.action.args
            gid = send.fields.get("group_id") if isinstance(send, Send) else None
            if isinstance(gid, str) and gid not in groups and not gid.startswith("$"):
                groups.append(gid)
        n = self.scenario.cluster.offsets_partitions
        out = []
        for gid in groups:
            view = sim.group(gid)
            members = []
            if view is not None:
                for m in view.members:
                    cid = self.consumer_of(m.member_id, m.group_instance_id)
                    parts = decode_assignment(m.assignment)
                    if parts is None and cid is not None:
                        parts = [str(tp) for tp in sim.assignment(cid)]
                    members.append(
                        MemberResult(
                            consumer=cid,
                            member_id=m.member_id,
                            group_instance_id=m.group_instance_id,
                            client_state=client_state(sim, cid) if cid else None,
                            assignment=tuple(sorted(parts or [], key=tp_key)),
                        )
                    )
            if view is None:
                modern = self._consumer_group_result(gid, n)
                if modern is not None:
                    out.append(modern)
                    continue
            members.sort(key=lambda m: (m.consumer is None, m.consumer or m.member_id))
            out.append(
                GroupResult(
                    group_id=gid,
                    state=view.state if view else None,
                    generation=view.generation_id if view else None,
                    leader=sim.leader(gid) if view else None,
                    leader_member_id=view.leader_id if view else None,
                    protocol=view.protocol_name if view else None,
                    coordinator=sim.coordinator(gid),
                    offsets_partition=partition_for(gid, n),
                    members=tuple(members),
                )
            )
        return tuple(out)


def _modern_member_result(player: Any, m: Any) -> MemberResult:
    cid = player.consumer_of(m.member_id, m.instance_id)
    parts = [f"{topic}-{p}" for topic, ps in m.assigned for p in ps]
    return MemberResult(
        consumer=cid,
        member_id=m.member_id,
        group_instance_id=m.instance_id,
        client_state=client_state(player.sim, cid) if cid else None,
        assignment=tuple(sorted(parts, key=tp_key)),
    )


def play(
    scenario: Scenario,
    *,
    until_ms: int | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
    player_class: type[Player] | None = None,
) -> RunResult:
    """Run ``scenario`` with ``player_class`` (``Player``, or a design's: scenarios.runner)."""
    end = until_ms if until_ms is not None else scenario.end_ms
    player = None
    error = None
    try:
        player = (player_class or Player)(scenario, seed=seed)
        player.play(until_ms, progress)
    except ScenarioRuntimeError as exc:
        error = str(exc)
    except Exception as exc:
        action = getattr(player, "current_action", None)
        from scenarios.simulation import SimulationError

        if isinstance(exc, SimulationError) and action is not None and action.where is not None:
            # the simulation refused a step of the scenario: point at the step, not at our code
            w = action.where
            where = f"{w.source}:{w.line}:{w.column}" if w.line is not None else w.source
            error = f"{where}: {w.path}: `{action.kind}` refused at t={action.at_ms}ms: {exc}"
        else:
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            error = f"simulator error: {type(exc).__name__}: {exc} (at {tb.filename}:{tb.lineno})"
    events = player.sim.events if player is not None else []
    groups: tuple[GroupResult, ...] = ()
    rebalances: tuple[dict[str, Any], ...] = ()
    violations: tuple[dict[str, Any], ...] = ()
    measures: dict[str, Any] | None = None
    if player is not None:
        try:
            rebalances = tuple(_record(r) for r in player.sim.rebalances())
            unowned = unowned_by_group(events, rebalances, end)
            groups = tuple(
                attrs.evolve(
                    g,
                    unowned_partition_ms=unowned.get(g.group_id, (0, 0))[0],
                    unowned_in_rebalances_partition_ms=unowned.get(g.group_id, (0, 0))[1],
                )
                for g in player.group_results()
            )
            violations = tuple(player.sim.violations)
            measures = {
                "design": scenario.design,
                **design_measures(
                    events,
                    {t.name: t.partitions for t in scenario.cluster.topics},
                    [a.at_ms for a in scenario.timeline if a.at_ms <= end],
                    player.sim.now,
                ),
            }
        except Exception as exc:
            error = error or f"simulator error while summarising: {type(exc).__name__}: {exc}"
    return RunResult(
        scenario=scenario.name,
        description=scenario.description,
        source=scenario.source,
        seed=scenario.seed if seed is None else seed,
        end_ms=end,
        groups=groups,
        rebalances=rebalances,
        expectations=tuple(player.results) if player is not None else (),
        invariant_violations=violations,
        events=events,
        error=error,
        measures=measures,
    )


# -- helpers --------------------------------------------------------------------------------------


class _ThreadsToMembers:
    """Wraps a ZooKeeper-era assignor whose ``assign`` answers per consumer thread ("C1-0")
    so that the group gets what Kafka's protocol carries: one assignment per member id.

    The legacy assignors (assignors.legacy) return thread ids, as the Scala code did; a group
    member owns the union of its threads' partitions (``threads_by_member``). Output that is
    already keyed by member ids passes through unchanged.
    """

    def __new__(cls, inner: Any) -> Any:
        from assignors.api import PartitionAssignor
        from assignors.legacy import threads_by_member

        class Folding(PartitionAssignor):
            name = inner.name
            supported_protocols = tuple(inner.supported_protocols)
            version = getattr(inner, "version", 0)

            def assign(self, cluster: Any, subscriptions: Any) -> Any:
                result = inner.assign(cluster, subscriptions)
                if set(result) <= set(subscriptions):
                    return result
                return threads_by_member(result, subscriptions)

        return Folding()


def _member_keyed(name: Any) -> Any:
    if name in ("legacy-range", "legacy-roundrobin"):
        from assignors import get_assignor

        return _ThreadsToMembers(get_assignor(name))
    return name


def _record(r: Any) -> dict[str, Any]:
    if hasattr(r, "to_dict"):
        out = dict(r.to_dict())
        out.setdefault("duration_ms", getattr(r, "duration_ms", None))
        return out
    if attrs.has(type(r)):
        return attrs.asdict(r, recurse=True)
    return dict(r) if isinstance(r, Mapping) else {"record": str(r)}


def _label(exp: Expectation) -> str:
    if exp.label:
        return exp.label
    what = ", ".join(exp.checks)
    grp = f"group {exp.group} " if exp.group else ""
    return f"{grp}at {exp.when}: {what}"
