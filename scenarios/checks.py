"""The expectations' checks: one class per check, each parsing, checking and evaluating itself.

An expectation ``{at: 20s, state: Stable, members: [C1, C2]}`` holds checks (``state``,
``members``) on a group. Each check is a frozen attrs class here, registered in ``CHECK_KINDS``
under its YAML key, holding the expected value (``expected``), typed:

- ``parse(v, raw, path)`` (a classmethod) checks the written value with the validator ``v``'s
  helpers, reports every problem through ``v.err`` and returns the check, or None when unusable;
- ``evaluate(player, group)`` compares it with the run (``scenarios.play.Player``) and returns
  one ``CheckResult`` per compared thing.

``needs_group`` marks the checks that are about one group: an expectation with one of them must
name its group when the scenario has several.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from attrs import frozen

from coordinator.placement import partition_for
from scenarios import configkeys as ck
from scenarios.actions import ScenarioRuntimeError
from scenarios.hints import did_you_mean, listing
from scenarios.result import CheckResult
from scenarios.yamlpos import PathT

if TYPE_CHECKING:
    from scenarios.play import Player
    from scenarios.validate import Validator

GROUP_STATES = (
    "Empty",
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    # a KIP-848 consumer group (ConsumerGroup.ConsumerGroupState)
    "Assigning",
    "Reconciling",
)
CLIENT_STATES = (
    "NEW",
    "UNJOINED",
    "PREPARING_REBALANCE",
    "COMPLETING_REBALANCE",
    "STABLE",
    "FAILED",
    "CLOSING",
    "CLOSED",
    "CRASHED",
    # a KIP-848 member (group.protocol: consumer): Kafka's consumer.internals.MemberState
    "UNSUBSCRIBED",
    "JOINING",
    "RECONCILING",
    "ACKNOWLEDGING",
    "FENCED",
    "PREPARE_LEAVING",
    "LEAVING",
    "FATAL",
    "STALE",
)
PARTITION_TEXT = re.compile(r"^(?P<topic>.+)-(?P<first>\d+)(?:\.\.(?P<last>\d+))?$")


@frozen
class Count:
    """``3`` (exactly), or ``{min: 1, max: 3}`` (``max`` None: no upper bound)."""

    min: int = 0
    max: int | None = None

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Count | None:
        if isinstance(raw, dict):
            v.check_keys(raw, path, ("min", "max"), "a count")
            lo = v.integer(raw.get("min", 0), (*path, "min"), minimum=0)
            hi = raw.get("max")
            if hi is not None:
                hi = v.integer(hi, (*path, "max"), minimum=0)
            return cls(lo or 0, hi)
        n = v.integer(raw, path, minimum=0)
        return None if n is None else cls(n, n)

    def result(self, name: str, actual: int) -> CheckResult:
        lo, hi = self.min, self.max
        ok = actual >= lo and (hi is None or actual <= hi)
        expected = lo if hi == lo else (f">= {lo}" if hi is None else f"{lo}..{hi}")
        return CheckResult(name, expected, actual, ok)

    def as_dict(self) -> dict[str, int | None]:
        return {"min": self.min, "max": self.max}


AT_LEAST_ONCE = Count(1, None)


@frozen
class EventPattern:
    """One ``events:`` entry: field values an event must have, and how many may match."""

    match: Mapping[str, Any]
    count: Count = AT_LEAST_ONCE


@frozen
class Check:
    """One check of an expectation (subclasses are the checks)."""

    name: ClassVar[str] = ""
    needs_group: ClassVar[bool] = False
    # why the check means nothing for a KIP-848 consumer group (None: it means something)
    not_for_consumer_groups: ClassVar[str | None] = None
    expected: Any

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Check | None:
        raise NotImplementedError

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        raise NotImplementedError

    def shown(self) -> Any:
        """The expected value as a failed query's result shows it."""
        return self.expected

    def _eq(self, actual: Any, expected: Any = None, name: str | None = None) -> CheckResult:
        expected = self.expected if expected is None else expected
        return CheckResult(name or self.name, expected, actual, expected == actual)


@frozen
class State(Check):
    name: ClassVar[str] = "state"
    needs_group: ClassVar[bool] = True
    expected: str

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> State | None:
        if raw not in GROUP_STATES:
            v.err(
                path,
                f"unknown group state {raw!r}",
                hint=did_you_mean(str(raw), GROUP_STATES) or listing("state", GROUP_STATES),
            )
            return None
        return cls(raw)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [self._eq(player.sim.group_state(_named(group, self.name)))]


@frozen
class Generation(Check):
    name: ClassVar[str] = "generation"
    needs_group: ClassVar[bool] = True
    expected: int

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Generation | None:
        n = v.integer(raw, path, minimum=0)
        return None if n is None else cls(n)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [self._eq(player.sim.generation(_named(group, self.name)))]


@frozen
class Leader(Check):
    """The leader's consumer id (its member id when no scenario consumer is behind it).

    Classic groups only: the consumer protocol (KIP-848) has no leader. The coordinator runs
    the assignor itself (group.remote.assignor / group.consumer.assignors), so no member is
    elected to compute the assignment and ConsumerGroupHeartbeatResponse carries none; the
    validator refuses the check on a group whose consumers all use ``group.protocol: consumer``.
    """

    name: ClassVar[str] = "leader"
    needs_group: ClassVar[bool] = True
    not_for_consumer_groups: ClassVar[str | None] = (
        "a consumer group (group.protocol: consumer, KIP-848) has no leader: the coordinator "
        "computes the assignment with its own assignor and no member is elected to do it"
    )
    expected: str | None

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Leader | None:
        if raw is None:
            return cls(None)
        if not isinstance(raw, str) or not v.ref(raw, path, v.consumer_ids, "consumer"):
            return None
        return cls(raw)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        sim = player.sim
        actual = sim.leader(_named(group, self.name))
        if actual is None and sim.leader_member_id(_named(group, self.name)):
            actual = sim.leader_member_id(_named(group, self.name))
        return [CheckResult(self.name, self.expected, actual, self.expected == actual)]


@frozen
class Protocol(Check):
    name: ClassVar[str] = "protocol"
    needs_group: ClassVar[bool] = True
    expected: str | None

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Protocol | None:
        if raw is None:
            return cls(None)
        if not isinstance(raw, str) or not ck.known_assignor(raw):
            v.err(
                path, f"unknown protocol {raw!r}", hint=did_you_mean(str(raw), ck.BUILTIN_ASSIGNORS)
            )
            return None
        return cls(ck.canonical_assignor(raw))

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        actual = player.sim.protocol(_named(group, self.name))
        return [CheckResult(self.name, self.expected, actual, self.expected == actual)]


@frozen
class Members(Check):
    """The member count, or the members' consumer ids (sorted).

    A classic group's members (JoinGroup'd into the current generation), or a KIP-848 consumer
    group's: the members the coordinator holds, from their first heartbeat (epoch 0) until they
    leave with epoch -1 or are fenced; a member still reconciling counts, and so does a static
    member that left with epoch -2 (the coordinator keeps it, at epoch -2, for its instance id
    to come back within the session timeout).
    """

    name: ClassVar[str] = "members"
    needs_group: ClassVar[bool] = True
    expected: int | tuple[str, ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Members | None:
        if isinstance(raw, int) and not isinstance(raw, bool):
            n = v.integer(raw, path, minimum=0)
            return None if n is None else cls(n)
        names = v.consumer_refs(raw, path)
        return None if names is None else cls(tuple(sorted(names)))

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        members = sorted(player.member_names(_named(group, self.name)))
        if isinstance(self.expected, int):
            return [self._eq(len(members))]
        return [self._eq(members, list(self.expected))]


def parse_partitions(v: Validator, raw: Any, path: PathT) -> tuple[str, ...] | None:
    """``T1-0``, ``[T1-0, T1-2]``, ``T1-0..3`` (a range), ``[]``: partition texts, expanded."""
    if raw is None or raw == []:
        return ()
    items = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for i, item in enumerate(items):
        ipath = (*path, i) if isinstance(raw, list) else path
        if not isinstance(item, str) or not (m := PARTITION_TEXT.match(item)):
            v.err(ipath, f"expected a partition like T1-0 (or a range T1-0..3), got {item!r}")
            return None
        topic = m.group("topic")
        if not v.ref(topic, ipath, sorted(v.all_topics), "topic"):
            return None
        first = int(m.group("first"))
        last = int(m.group("last")) if m.group("last") else first
        if last < first:
            v.err(ipath, f"empty range {item!r}")
            return None
        out.extend(f"{topic}-{p}" for p in range(first, last + 1))
    return tuple(out)


def _partitions_by_consumer(
    v: Validator, raw: Any, path: PathT
) -> dict[str, tuple[str, ...]] | None:
    m = v.mapping(raw, path, "assignment (consumer: [partitions])")
    if m is None:
        return None
    out = {}
    for cid, parts in m.items():
        if not v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
            continue
        p = parse_partitions(v, parts, (*path, cid))
        if p is not None:
            out[cid] = p
    return out


def tp_key(text: str) -> tuple[str, int]:
    """Sort ``t-p`` texts by topic, then partition number."""
    topic, _, p = str(text).rpartition("-")
    return (topic, int(p)) if p.isdigit() else (str(text), -1)


@frozen
class Assignment(Check):
    """Exactly these partitions per consumer."""

    name: ClassVar[str] = "assignment"
    expected: Mapping[str, tuple[str, ...]]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Assignment | None:
        out = _partitions_by_consumer(v, raw, path)
        return None if out is None else cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        out = []
        for cid, parts in self.expected.items():
            actual = sorted(str(tp) for tp in player.sim.assignment(cid))
            expected = sorted(parts, key=tp_key)
            actual = sorted(actual, key=tp_key)
            out.append(CheckResult(f"assignment[{cid}]", expected, actual, expected == actual))
        return out


@frozen
class Owns(Check):
    """At least these partitions per consumer."""

    name: ClassVar[str] = "owns"
    expected: Mapping[str, tuple[str, ...]]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Owns | None:
        out = _partitions_by_consumer(v, raw, path)
        return None if out is None else cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        out = []
        for cid, parts in self.expected.items():
            actual = {str(tp) for tp in player.sim.assignment(cid)}
            missing = sorted(set(parts) - actual, key=tp_key)
            out.append(
                CheckResult(
                    f"owns[{cid}]",
                    sorted(parts, key=tp_key),
                    f"missing {missing}" if missing else "all owned",
                    not missing,
                )
            )
        return out


@frozen
class Sizes(Check):
    """How many partitions each consumer owns."""

    name: ClassVar[str] = "sizes"
    expected: Mapping[str, int]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Sizes | None:
        m = v.mapping(raw, path, "sizes (consumer: number of partitions)")
        if m is None:
            return None
        out = {}
        for cid, n in m.items():
            if v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                count = v.integer(n, (*path, cid), minimum=0)
                if count is not None:
                    out[cid] = count
        return cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        sim = player.sim
        return [
            self._eq(len(sim.assignment(cid)), n, f"sizes[{cid}]")
            for cid, n in self.expected.items()
        ]


@frozen
class Rebalances(Check):
    """How many rebalances of the group completed (``scenarios.history``)."""

    name: ClassVar[str] = "rebalances"
    needs_group: ClassVar[bool] = True
    expected: Count

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Rebalances | None:
        c = Count.parse(v, raw, path)
        return None if c is None else cls(c)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        rebalances = completed_rebalances(player.sim, _named(group, self.name))
        return [self.expected.result(self.name, len(rebalances))]

    def shown(self) -> Any:
        return self.expected.as_dict()


@frozen
class ErrorCounts(Check):
    """``errors: [E1, E2]`` (each at least once) or ``{E1: count}``: coordinator answers."""

    name: ClassVar[str] = "errors"
    expected: Mapping[str, Count]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> ErrorCounts | None:
        out: dict[str, Count] = {}
        if isinstance(raw, dict):
            for name, count in raw.items():
                if v.error_name(name, (*path, name)):
                    c = Count.parse(v, count, (*path, name))
                    if c is not None:
                        out[name] = c
            return cls(out)
        names = v.string_list(raw, path)
        if names is None:
            return None
        for i, n in enumerate(names):
            if v.error_name(n, (*path, i) if isinstance(raw, list) else path):
                out[n] = AT_LEAST_ONCE
        return cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [
            spec.result(f"errors[{name}]", player.error_count(name, group))
            for name, spec in self.expected.items()
        ]

    def shown(self) -> Any:
        return {name: c.as_dict() for name, c in self.expected.items()}


@frozen
class NoErrors(Check):
    """Error names no coordinator answer carried."""

    name: ClassVar[str] = "no_errors"
    expected: tuple[str, ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> NoErrors | None:
        names = v.string_list(raw, path)
        if names is None:
            return None
        ok = [
            n
            for i, n in enumerate(names)
            if v.error_name(n, (*path, i) if isinstance(raw, list) else path)
        ]
        return cls(tuple(ok))

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [
            self._eq(player.error_count(name, group), 0, f"no_errors[{name}]")
            for name in self.expected
        ]


@frozen
class ClientStates(Check):
    """Each consumer's MemberState (or process status: CRASHED, CLOSED, ...)."""

    name: ClassVar[str] = "client_states"
    expected: Mapping[str, str]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> ClientStates | None:
        m = v.mapping(raw, path, "client_states (consumer: state)")
        if m is None:
            return None
        out = {}
        for cid, state in m.items():
            if not v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                continue
            if state not in CLIENT_STATES:
                v.err(
                    (*path, cid),
                    f"unknown client state {state!r}",
                    hint=did_you_mean(str(state), CLIENT_STATES) or listing("state", CLIENT_STATES),
                )
                continue
            out[cid] = state
        return cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [
            self._eq(client_state(player.sim, cid), state, f"client_states[{cid}]")
            for cid, state in self.expected.items()
        ]


@frozen
class MemberEpochs(Check):
    """Each consumer's member epoch (KIP-848: the epoch its last heartbeat answer gave, 0 while
    joining, -1/-2 once it left; classic: its generation, -1 outside the group)."""

    name: ClassVar[str] = "member_epochs"
    expected: Mapping[str, int]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> MemberEpochs | None:
        m = v.mapping(raw, path, "member_epochs (consumer: epoch)")
        if m is None:
            return None
        out = {}
        for cid, epoch in m.items():
            if not v.ref(cid, (*path, cid), v.consumer_ids, "consumer"):
                continue
            n = v.integer(epoch, (*path, cid), minimum=-2)
            if n is not None:
                out[cid] = n
        return cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [
            self._eq(player.sim.consumer(cid).generation_id, epoch, f"member_epochs[{cid}]")
            for cid, epoch in self.expected.items()
        ]


@frozen
class Invariants(Check):
    """``true``: no invariant violation so far (``scenarios.invariants``)."""

    name: ClassVar[str] = "invariants"
    expected: bool

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Invariants | None:
        if not isinstance(raw, bool):
            v.err(path, "invariants must be true (no violation so far) or false")
            return None
        return cls(raw)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        violations = player.sim.violations
        if not violations:
            return [self._eq(True)]
        return [CheckResult(self.name, "no violation", violations[:3], not self.expected)]


@frozen
class Coordinator(Check):
    """The broker that coordinates the group."""

    name: ClassVar[str] = "coordinator"
    needs_group: ClassVar[bool] = True
    expected: str

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Coordinator | None:
        b = v.broker_ref(raw, path)
        if isinstance(b, dict):
            v.err(path, "name the broker you expect, e.g. broker-1")
            return None
        return None if b is None else cls(str(b))

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        return [self._eq(player.sim.coordinator(_named(group, self.name)))]


@frozen
class OffsetsPartition(Check):
    """The ``__consumer_offsets`` partition of the group (GroupCoordinatorService.partitionFor)."""

    name: ClassVar[str] = "offsets_partition"
    needs_group: ClassVar[bool] = True
    expected: int

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> OffsetsPartition | None:
        n = v.broker_config.get("offsets_topic_num_partitions", 50)
        p = v.integer(raw, path, minimum=0, maximum=n - 1)
        return None if p is None else cls(p)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        n = player.scenario.cluster.offsets_partitions
        return [self._eq(partition_for(_named(group, self.name), n))]


@frozen
class Events(Check):
    """``events: [{event: name, field: value, count: ...}]``: how many logged events match."""

    name: ClassVar[str] = "events"
    expected: tuple[EventPattern, ...]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Events | None:
        if not isinstance(raw, list):
            v.err(path, "events must be a list of {event: name, field: value, ...}")
            return None
        out = []
        for i, item in enumerate(raw):
            m = v.mapping(item, (*path, i), "an event pattern")
            if m is None:
                continue
            if "event" not in m and "count" not in m:
                v.err((*path, i), "an event pattern needs `event`")
                continue
            pattern = dict(m)
            count = pattern.pop("count", None)
            spec = Count.parse(v, count, (*path, i, "count")) if count is not None else None
            if count is not None and spec is None:
                continue
            out.append(EventPattern(pattern, spec or AT_LEAST_ONCE))
        return cls(tuple(out))

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        out = []
        for pattern in self.expected:
            match = pattern.match
            count = sum(
                1
                for e in player.sim.events
                if all(_matches(e.get(k), value) for k, value in match.items())
            )
            out.append(pattern.count.result(f"events[{_fmt_match(match)}]", count))
        return out

    def shown(self) -> Any:
        return tuple({"match": p.match, "count": p.count.as_dict()} for p in self.expected)


MEASURE_NAMES = (
    "notifications",
    "rebalance_attempts",
    "conflicts",
    "retries",
    "failed_rebalances",
    "unowned_at_end",
)


@frozen
class Measures(Check):
    """``measures: {notifications: 3, rebalance_attempts: {min: 4}, ...}``: seed 004's measures
    of the run so far (``scenarios.measures``), counted the same way under every design."""

    name: ClassVar[str] = "measures"
    expected: Mapping[str, Count]

    @classmethod
    def parse(cls, v: Validator, raw: Any, path: PathT) -> Measures | None:
        m = v.mapping(raw, path, "measures (measure: count)")
        if m is None:
            return None
        v.check_keys(m, path, MEASURE_NAMES, "measures")
        out = {}
        for key, value in m.items():
            if key in MEASURE_NAMES:
                c = Count.parse(v, value, (*path, key))
                if c is not None:
                    out[key] = c
        return cls(out)

    def evaluate(self, player: Player, group: str | None) -> list[CheckResult]:
        from scenarios.measures import design_measures

        sc = player.scenario
        got = design_measures(
            player.sim.events,
            {t.name: t.partitions for t in sc.cluster.topics},
            [a.at_ms for a in sc.timeline],
            player.sim.now,
        )
        got["unowned_at_end"] = got["unowned"][-1][1] if got["unowned"] else 0
        return [c.result(f"measures[{k}]", int(got[k])) for k, c in self.expected.items()]

    def shown(self) -> Any:
        return {k: c.as_dict() for k, c in self.expected.items()}


CHECK_KINDS: dict[str, type[Check]] = {
    cls.name: cls
    for cls in (
        State,
        Generation,
        Leader,
        Protocol,
        Members,
        Assignment,
        Owns,
        Sizes,
        Rebalances,
        ErrorCounts,
        NoErrors,
        ClientStates,
        MemberEpochs,
        Invariants,
        Coordinator,
        OffsetsPartition,
        Events,
        Measures,
    )
}
"""Every check an expectation may hold, in the order messages list them."""


def _named(group: str | None, check: str) -> str:
    """The group of a ``needs_group`` check (the validator asks for ``group:`` with them)."""
    if group is None:
        raise ScenarioRuntimeError(f"the {check} check needs a group")
    return group


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


def _matches(actual: Any, expected: Any) -> bool:
    if actual == expected:
        return True
    return actual is not None and str(actual) == str(expected)


def _fmt_match(match: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in match.items())
