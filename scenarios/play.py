"""Drive a validated Scenario through ``scenarios.simulation.Simulation``.

Time rules (docs/scenarios.md): the run visits every time point of the timeline and of the
expectations in order. At a point ``t`` it first runs every simulation event due at or before
``t``, then applies the timeline steps at ``t`` in file order, then evaluates the expectations at
``t``. After the last point it runs on to the end (``until``, ``--until``, or the last point +
30 s) and evaluates the ``at: end`` expectations. Anything a step sends arrives one network latency
later, so an expectation at the same ``t`` sees a step's local effect (a crash) but not yet the
coordinator's reaction.

Never raises for a bad run: a simulator exception ends the run and lands in ``RunResult.error``
(the Spark sweeps rely on this), with the events logged so far.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from coordinator import protocol as proto
from coordinator.placement import partition_for
from scenarios.model import Action, Expectation, Scenario
from scenarios.result import (
    CheckResult,
    ExpectationResult,
    GroupResult,
    MemberResult,
    RunResult,
)
from scenarios.validate import REF

Progress = Callable[[int, int], None]  # (simulated now ms, simulated end ms), for a display
PROGRESS_SLICE_MS = 60_000

DEFAULT_SESSION_TIMEOUT_MS = 45000
DEFAULT_REBALANCE_TIMEOUT_MS = 300000


#: checks of a group's own state: the validator asks for `group:` with them
_GROUP_CHECKS = frozenset(
    {
        "state",
        "generation",
        "leader",
        "protocol",
        "members",
        "rebalances",
        "coordinator",
        "offsets_partition",
    }
)


class ScenarioRuntimeError(Exception):
    """A step that cannot be carried out in the state the run reached (e.g. no coordinator)."""


@attrs.define
class _RawStep:
    action: Action
    call: Any = None  # scenarios.simulation.RawCall
    problem: str | None = None


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
            coordinator_config=CoordinatorConfig(**dict(c.config)),
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
        self.raw: dict[str, _RawStep] = {}
        # raw client -> (time, its latest successful JoinGroup response)
        self.last_join: dict[str, tuple[int, Any]] = {}
        self.raw_steps: list[_RawStep] = []
        self.results: list[ExpectationResult] = []

    # -- set-up -------------------------------------------------------------------------------

    def _add_consumers(self) -> None:
        from members.config import ConsumerConfig

        fields = {f.name for f in attrs.fields(ConsumerConfig)}
        for spec in self.scenario.consumers:
            kwargs = {k: v for k, v in spec.config.items() if k in fields}
            if "partition_assignment_strategy" in kwargs:
                kwargs["partition_assignment_strategy"] = tuple(
                    _member_keyed(name) for name in kwargs["partition_assignment_strategy"]
                )
            self.sim.add_consumer(
                spec.id,
                ConsumerConfig(**kwargs),
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
                self.results.append(self.check_raw(step))

    def apply(self, action: Action) -> None:
        sim = self.sim
        args = action.args
        if "note" in args:
            sim.log.append("scenario_note", t_ms=sim.now, node="scenario", note=args["note"])
        kind = action.kind
        if kind == "close":
            for cid, timeout_ms in zip(args["consumers"], args["timeouts"], strict=True):
                sim.close(cid, timeout_ms)
        elif kind in ("start", "crash", "restart", "commit"):
            for cid in args["consumers"]:
                getattr(sim, kind)(cid)
        elif kind == "subscribe":
            for cid, topics in args["subscriptions"]:
                sim.subscribe(cid, list(topics))
        elif kind == "stall":
            for cid, ms in args["stalls"]:
                sim.stall(cid, ms)
        elif kind == "add_partitions":
            for topic, more in args["topics"]:
                current = sim.cluster.topics().get(topic)
                if current is None:
                    raise ScenarioRuntimeError(
                        f"{action.where}: topic {topic} does not exist at {sim.now}ms"
                    )
                sim.add_partitions(topic, current + more)
        elif kind == "create_topic":
            for topic, n in args["topics"]:
                sim.create_topic(topic, n)
        elif kind == "delete_topic":
            for topic in args["topics"]:
                sim.delete_topic(topic)
        elif kind == "crash_broker":
            sim.fail_broker(self.broker(args["broker"], action))
        elif kind == "restart_broker":
            sim.restart_broker(self.broker(args["broker"], action))
        elif kind == "network":
            sides = [list(s) for s in args["sides"]]
            if args["isolate"]:
                # the isolated nodes on one side; everything else shares the other island
                sim.partition_network([sides[0]], args["for_ms"])
            else:
                sim.partition_network(sides, args["for_ms"])
        elif kind == "send":
            self.send(action)
        elif kind == "note":
            pass
        else:  # pragma: no cover - the validator admits only the kinds above
            raise ScenarioRuntimeError(f"unknown action {kind}")

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

    # -- raw requests -------------------------------------------------------------------------

    def resolve(self, value: Any) -> Any:
        if isinstance(value, str):
            m = REF.match(value)
            if m:
                step = self.raw.get(m.group("name"))
                response = None if step is None or step.call is None else step.call.response
                if response is None:
                    raise ScenarioRuntimeError(
                        f"{value}: request `{m.group('name')}` has no response yet at {self.sim.now}ms"
                    )
                attr = m.group("field")
                if attr == "error":
                    return response.error_code.name
                if not hasattr(response, attr):
                    raise ScenarioRuntimeError(
                        f"{value}: a {type(response).__name__} has no field {attr}"
                    )
                return getattr(response, attr)
            return value
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, dict):
            return {self.resolve(k): self.resolve(v) for k, v in value.items()}
        return value

    def send(self, action: Action) -> None:
        args = action.args
        self._remember_joins()
        step = _RawStep(action)
        self.raw_steps.append(step)
        if action.name:
            self.raw[action.name] = step
        try:
            fields = {k: self.resolve(v) for k, v in args["fields"].items()}
            if args["api"] == "JoinGroup":
                fields.setdefault("client_id", args["from"])  # member ids read "app-<uuid>"
            if args["api"] == "SyncGroup":
                # like a Java client, name the protocol of the generation it joined (v5+ needs it)
                joined = (self.last_join.get(args["from"]) or (0, None))[1]
                fields.setdefault(
                    "protocol_type", getattr(joined, "protocol_type", None) or "consumer"
                )
                protocol_name = getattr(joined, "protocol_name", None)
                if protocol_name:
                    fields.setdefault("protocol_name", protocol_name)
            request = build_request(args["api"], fields, self.scenario)
            to = args["to"]
            if to == "coordinator":
                group = fields.get("group_id") or (fields.get("groups") or [None])[0]
                to = self.sim.coordinator(group) if group is not None else None
                if to is None:
                    raise ScenarioRuntimeError(
                        f"group {group} has no live coordinator at {self.sim.now}ms"
                    )
            else:
                to = self.broker(to, action)
        except (ScenarioRuntimeError, ValueError, TypeError) as exc:
            step.problem = str(exc)
            self.sim.log.append(
                "scenario_raw_failed",
                t_ms=self.sim.now,
                node=args["from"],
                api=args["api"],
                reason=str(exc),
            )
            return
        self.sim.log.append(
            "scenario_raw_sent",
            t_ms=self.sim.now,
            node=args["from"],
            src=args["from"],
            dst=to,
            api=args["api"],
            summary=_summary(request),
        )
        step.call = self.sim.send_raw(request, to, args["from"])

    def _remember_joins(self) -> None:
        for step in self.raw_steps:
            call = step.call
            response = None if call is None else call.response
            if isinstance(response, proto.JoinGroupResponse) and response.error_code.name == "NONE":
                prev = self.last_join.get(call.src)
                if prev is None or prev[0] <= (call.received_ms or 0):
                    self.last_join[call.src] = (call.received_ms or 0, response)

    def check_raw(self, step: _RawStep) -> ExpectationResult:
        action = step.action
        label = f"{action.args['api']} sent at {action.at_ms}ms" + (
            f" ({action.name})" if action.name else ""
        )
        checks: list[CheckResult] = []
        call = step.call
        response = None if call is None else call.response
        if step.problem is not None:
            checks.append(CheckResult("sent", "request sent", step.problem, False))
        elif response is None:
            what = "disconnected" if call.disconnected else "no response (still parked, or lost)"
            checks.append(CheckResult("response", "a response", what, False))
        else:
            for key, expected in (action.expect or {}).items():
                try:
                    expected = self.resolve(expected)
                except ScenarioRuntimeError as exc:
                    checks.append(CheckResult(key, expected, str(exc), False))
                    continue
                actual = response_field(response, key)
                if key == "members" and isinstance(expected, int):
                    actual = len(response.members)
                if isinstance(expected, list) and isinstance(actual, (list, tuple)):
                    ok = sorted(map(str, expected)) == sorted(map(str, actual))
                else:
                    ok = actual == expected
                checks.append(CheckResult(key, expected, actual, ok))
        return ExpectationResult(
            label=label,
            at_ms=action.at_ms,
            group=action.args["fields"].get("group_id"),
            where=str(action.where),
            checks=tuple(checks),
        )

    # -- expectations -------------------------------------------------------------------------

    def evaluate(self, exp: Expectation) -> ExpectationResult:
        sim = self.sim
        g = exp.group
        checks: list[CheckResult] = []
        for key, expected in exp.checks.items():
            try:
                checks.extend(self.check(key, expected, g))
            except Exception as exc:  # a query failing is a failed check, not a crash
                checks.append(CheckResult(key, expected, f"error: {exc}", False))
        return ExpectationResult(
            label=_label(exp) + (f" [t={sim.now}ms]" if exp.at_ms is None else ""),
            at_ms=exp.at_ms if exp.at_ms is not None else sim.now,
            group=g,
            where=str(exp.where),
            checks=tuple(checks),
        )

    def check(self, key: str, expected: Any, group: str | None) -> list[CheckResult]:
        sim = self.sim
        if key in _GROUP_CHECKS:
            if group is None:  # the validator asks for `group:` with these checks
                raise ScenarioRuntimeError(f"the {key} check needs a group")
            return self.check_group(key, expected, group)
        if key == "assignment":
            out = []
            for cid, parts in expected.items():
                actual = sorted(str(tp) for tp in sim.assignment(cid))
                out.append(
                    _eq(
                        f"assignment[{cid}]",
                        sorted(parts, key=_tp_key),
                        sorted(actual, key=_tp_key),
                    )
                )
            return out
        if key == "owns":
            out = []
            for cid, parts in expected.items():
                owned = {str(tp) for tp in sim.assignment(cid)}
                missing = sorted(set(parts) - owned, key=_tp_key)
                out.append(
                    CheckResult(
                        f"owns[{cid}]",
                        sorted(parts, key=_tp_key),
                        f"missing {missing}" if missing else "all owned",
                        not missing,
                    )
                )
            return out
        if key == "sizes":
            return [
                _eq(f"sizes[{cid}]", n, len(sim.assignment(cid))) for cid, n in expected.items()
            ]
        if key == "errors":
            return [
                _count(f"errors[{name}]", spec, self.error_count(name, group))
                for name, spec in expected.items()
            ]
        if key == "no_errors":
            return [
                _eq(f"no_errors[{name}]", 0, self.error_count(name, group)) for name in expected
            ]
        if key == "client_states":
            return [
                _eq(f"client_states[{cid}]", state, client_state(sim, cid))
                for cid, state in expected.items()
            ]
        if key == "invariants":
            violations = sim.violations
            return [
                _eq("invariants", expected, not violations)
                if not violations
                else CheckResult("invariants", "no violation", violations[:3], not expected)
            ]
        if key == "events":
            out = []
            for pattern in expected:
                match = pattern["match"]
                count = sum(
                    1 for e in sim.events if all(_matches(e.get(k), v) for k, v in match.items())
                )
                out.append(_count(f"events[{_fmt_match(match)}]", pattern["count"], count))
            return out
        raise ScenarioRuntimeError(f"unknown check {key}")  # pragma: no cover

    def check_group(self, key: str, expected: Any, group: str) -> list[CheckResult]:
        """The checks of the group's own state (those the validator needs a group for)."""
        sim = self.sim
        if key == "state":
            return [_eq("state", expected, sim.group_state(group))]
        if key == "generation":
            return [_eq("generation", expected, sim.generation(group))]
        if key == "leader":
            actual = sim.leader(group)
            if actual is None and sim.leader_member_id(group):
                actual = sim.leader_member_id(group)
            return [_eq("leader", expected, actual)]
        if key == "protocol":
            return [_eq("protocol", expected, sim.protocol(group))]
        if key == "members":
            members = sorted(self.member_names(group))
            if isinstance(expected, int):
                return [_eq("members", expected, len(members))]
            return [_eq("members", list(expected), members)]
        if key == "rebalances":
            return [_count("rebalances", expected, len(completed_rebalances(sim, group)))]
        if key == "coordinator":
            return [_eq("coordinator", expected, sim.coordinator(group))]
        if key == "offsets_partition":
            n = self.scenario.cluster.offsets_partitions
            return [_eq("offsets_partition", expected, partition_for(group, n))]
        raise ScenarioRuntimeError(f"unknown check {key}")  # pragma: no cover

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
        view = self.sim.group(group) if group else None
        if view is None:
            return []
        return [
            self.consumer_of(m.member_id, m.group_instance_id) or m.member_id for m in view.members
        ]

    def error_count(self, name: str, group: str | None = None) -> int:
        """How many coordinator responses carried error ``name`` (for ``group``, or no group)."""
        return sum(
            1
            for e in self.sim.events
            if e.get("event") == "response_sent"
            and e.get("error") == name
            and (group is None or e.get("group_id") in (group, None))
        )

    # -- the result ---------------------------------------------------------------------------

    def group_results(self) -> tuple[GroupResult, ...]:
        sim = self.sim
        groups = list(self.scenario.groups)
        for step in self.raw_steps:
            gid = step.action.args["fields"].get("group_id")
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
                    parts = _decode_assignment(m.assignment)
                    if parts is None and cid is not None:
                        parts = [str(tp) for tp in sim.assignment(cid)]
                    members.append(
                        MemberResult(
                            consumer=cid,
                            member_id=m.member_id,
                            group_instance_id=m.group_instance_id,
                            client_state=client_state(sim, cid) if cid else None,
                            assignment=tuple(sorted(parts or [], key=_tp_key)),
                        )
                    )
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


def play(
    scenario: Scenario,
    *,
    until_ms: int | None = None,
    seed: int | None = None,
    progress: Progress | None = None,
) -> RunResult:
    end = until_ms if until_ms is not None else scenario.end_ms
    player = None
    error = None
    try:
        player = Player(scenario, seed=seed)
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
    if player is not None:
        try:
            groups = player.group_results()
            rebalances = tuple(_record(r) for r in player.sim.rebalances())
            violations = tuple(player.sim.violations)
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


def build_request(api: str, fields: dict[str, Any], scenario: Scenario) -> object:
    """A protocol request from a scenario's ``send`` fields, with a Java client's usual defaults."""
    from assignors.api import Subscription, TopicPartition
    from members.consumer_protocol import encode_assignment, encode_subscription

    f = dict(fields)
    if api == "JoinGroup":
        topics = f.pop("topics", [])
        protocols = []
        for p in f.get("protocols", ["range"]):
            if isinstance(p, str):
                protocols.append(
                    proto.JoinGroupRequestProtocol(
                        p, encode_subscription(Subscription(topics=list(topics)))
                    )
                )
            else:
                protocols.append(
                    proto.JoinGroupRequestProtocol(
                        p["name"],
                        encode_subscription(Subscription(topics=list(p.get("topics", topics)))),
                    )
                )
        f["protocols"] = tuple(protocols)
        f.setdefault("session_timeout_ms", DEFAULT_SESSION_TIMEOUT_MS)
        f.setdefault("rebalance_timeout_ms", DEFAULT_REBALANCE_TIMEOUT_MS)
        f.setdefault("member_id", "")
        f.setdefault("protocol_type", "consumer")
        return proto.JoinGroupRequest(**f)
    if api == "SyncGroup":
        assignments = f.pop("assignments", {}) or {}
        if isinstance(assignments, dict):
            f["assignments"] = tuple(
                proto.SyncGroupRequestAssignment(
                    str(mid), encode_assignment([TopicPartition.parse(str(p)) for p in parts])
                )
                for mid, parts in assignments.items()
            )
        f.setdefault("member_id", "")
        f.setdefault("generation_id", -1)
        return proto.SyncGroupRequest(**f)
    if api == "Heartbeat":
        f.setdefault("member_id", "")
        f.setdefault("generation_id", -1)
        return proto.HeartbeatRequest(**f)
    if api == "LeaveGroup":
        members = []
        for m in f.pop("members", []) or []:
            if isinstance(m, str):
                members.append(proto.MemberIdentity(m))
            else:
                members.append(proto.MemberIdentity(**m))
        f["members"] = tuple(members)
        return proto.LeaveGroupRequest(**f)
    if api == "OffsetCommit":
        by_name: dict[str, list[proto.OffsetCommitRequestPartition]] = {}
        for text, offset in (f.pop("topics", {}) or {}).items():
            tp = TopicPartition.parse(str(text))
            by_name.setdefault(tp.topic, []).append(
                proto.OffsetCommitRequestPartition(tp.partition, int(offset))
            )
        f["topics"] = tuple(
            proto.OffsetCommitRequestTopic(t, tuple(ps)) for t, ps in by_name.items()
        )
        f.setdefault("member_id", "")
        f.setdefault("generation_id", -1)
        return proto.OffsetCommitRequest(**f)
    if api == "OffsetFetch":
        raw = f.pop("topics", None)
        if raw is not None:
            by_topic: dict[str, list[int]] = {}
            for text in raw:
                tp = TopicPartition.parse(str(text))
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            f["topics"] = tuple(
                proto.OffsetFetchRequestTopic(t, tuple(ps)) for t, ps in by_topic.items()
            )
        return proto.OffsetFetchRequest(**f)
    if api == "DescribeGroups":
        f.setdefault("groups", list(scenario.groups))
        f["groups"] = tuple(f["groups"])
        return proto.DescribeGroupsRequest(**f)
    if api == "DeleteGroups":
        f.setdefault("groups_names", list(scenario.groups))
        f["groups_names"] = tuple(f["groups_names"])
        return proto.DeleteGroupsRequest(**f)
    if api == "Metadata" and f.get("topics") is not None:
        f["topics"] = tuple(f["topics"])
    if api == "ListGroups" and "states_filter" in f:
        f["states_filter"] = tuple(f["states_filter"])
    from scenarios.validate import REQUESTS

    return REQUESTS[api](**f)


def response_field(response: object, key: str) -> Any:
    if key == "error":
        code = getattr(response, "error_code", None)
        if code is None and hasattr(response, "topics"):
            # OffsetCommit answers per partition: the error when every partition agrees
            codes = {p.error_code for t in response.topics for p in t.partitions}
            code = codes.pop() if len(codes) == 1 else None
        return getattr(code, "name", code)
    if key == "members_count":
        return len(getattr(response, "members", ()))
    if key == "members":
        return [getattr(m, "member_id", m) for m in getattr(response, "members", ())]
    if key == "assignment":
        return _decode_assignment(getattr(response, "assignment", b"")) or []
    value = getattr(response, key, None)
    return (
        getattr(value, "name", value)
        if hasattr(value, "name") and not isinstance(value, str)
        else value
    )


def client_state(sim: Any, cid: str | None) -> str | None:
    """The member state (UNJOINED ... STABLE) of a running consumer, else its process status."""
    if cid is None:
        return None
    consumer = sim.consumer(cid)
    status = getattr(consumer, "status", None)
    status = getattr(status, "value", status)
    if status is not None and status not in ("RUNNING",):
        return str(status)
    state = getattr(consumer, "state", None)
    return str(getattr(state, "value", state))


def completed_rebalances(sim: Any, group: str | None) -> list[Any]:
    """Rebalances of ``group`` that ended (Stable, Empty or Dead); not one still under way."""
    return [r for r in sim.rebalances(group) if getattr(r, "outcome", None) != "unfinished"]


def _record(r: Any) -> dict[str, Any]:
    if hasattr(r, "to_dict"):
        out = dict(r.to_dict())
        out.setdefault("duration_ms", getattr(r, "duration_ms", None))
        return out
    if attrs.has(type(r)):
        return attrs.asdict(r, recurse=True)
    return dict(r) if isinstance(r, Mapping) else {"record": str(r)}


def _decode_assignment(data: bytes) -> list[str] | None:
    if not data:
        return None
    try:
        from members.consumer_protocol import decode_assignment

        parts, _ = decode_assignment(data)
    except Exception:
        return None
    return [str(tp) for tp in parts]


def _tp_key(text: str) -> tuple[str, int]:
    topic, _, p = str(text).rpartition("-")
    return (topic, int(p)) if p.isdigit() else (str(text), -1)


def _eq(name: str, expected: Any, actual: Any) -> CheckResult:
    return CheckResult(name, expected, actual, expected == actual)


def _count(name: str, spec: Mapping[str, Any], actual: int) -> CheckResult:
    lo, hi = spec.get("min", 0), spec.get("max")
    ok = actual >= lo and (hi is None or actual <= hi)
    expected = lo if hi == lo else (f">= {lo}" if hi is None else f"{lo}..{hi}")
    return CheckResult(name, expected, actual, ok)


def _matches(actual: Any, expected: Any) -> bool:
    if actual == expected:
        return True
    return actual is not None and str(actual) == str(expected)


def _fmt_match(match: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in match.items())


def _label(exp: Expectation) -> str:
    if exp.label:
        return exp.label
    what = ", ".join(exp.checks)
    grp = f"group {exp.group} " if exp.group else ""
    return f"{grp}at {exp.when}: {what}"


def _summary(request: object) -> str:
    bits = []
    for key in ("group_id", "member_id", "generation_id", "group_instance_id"):
        v = getattr(request, key, None)
        if v is not None and v != -1:
            bits.append(f"{key}={v!r}" if v == "" else f"{key}={v}")
    protocols = getattr(request, "protocols", None)
    if protocols:
        bits.append("protocols=[" + ", ".join(p.name for p in protocols) + "]")
    return " ".join(bits)
