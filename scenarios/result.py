"""What running a scenario produces: the data behind the CLI's report and its ``--json`` document.

Plain frozen attrs records with ``to_dict()``; the JSON document's schema is docs/result-schema.json
(RESULT_SCHEMA_VERSION below) and the CLI tests validate real outputs against it.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

# 2: groups[].unowned_partition_ms and unowned_in_rebalances_partition_ms, and measures, which
# version 1 documents lacked (docs/runner.md, "The --json result's versions")
RESULT_SCHEMA_VERSION = 2


@frozen
class MemberResult:
    consumer: str | None  # the scenario's consumer id (None for a raw client)
    member_id: str
    group_instance_id: str | None
    client_state: str | None
    assignment: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "consumer": self.consumer,
            "member_id": self.member_id,
            "group_instance_id": self.group_instance_id,
            "client_state": self.client_state,
            "assignment": list(self.assignment),
        }


@frozen
class GroupResult:
    group_id: str
    state: str | None
    generation: int | None
    leader: str | None  # consumer id
    leader_member_id: str | None
    protocol: str | None
    coordinator: str | None
    offsets_partition: int
    members: tuple[MemberResult, ...] = ()
    # partition-milliseconds during which a partition that had an owner had none, in all and the
    # part of it inside rebalance windows (scenarios.history.unowned_by_group; the report prints
    # both in partition-seconds)
    unowned_partition_ms: int = 0
    unowned_in_rebalances_partition_ms: int = 0

    @property
    def assignment(self) -> dict[str, list[str]]:
        return {(m.consumer or m.member_id): list(m.assignment) for m in self.members}

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "state": self.state,
            "generation": self.generation,
            "leader": self.leader,
            "leader_member_id": self.leader_member_id,
            "protocol": self.protocol,
            "coordinator": self.coordinator,
            "offsets_partition": self.offsets_partition,
            "members": [m.to_dict() for m in self.members],
            "assignment": self.assignment,
            "unowned_partition_ms": self.unowned_partition_ms,
            "unowned_in_rebalances_partition_ms": self.unowned_in_rebalances_partition_ms,
        }


@frozen
class CheckResult:
    check: str
    expected: Any
    actual: Any
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "expected": _plain(self.expected),
            "actual": _plain(self.actual),
            "passed": self.passed,
        }


@frozen
class ExpectationResult:
    label: str
    at_ms: int | None
    group: str | None
    where: str
    checks: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "at_ms": self.at_ms,
            "group": self.group,
            "where": self.where,
            "passed": self.passed,
            "checks": [c.to_dict() for c in self.checks],
        }


@frozen
class RunResult:
    scenario: str
    description: str
    source: str
    seed: int
    end_ms: int
    groups: tuple[GroupResult, ...] = ()
    rebalances: tuple[dict[str, Any], ...] = ()
    expectations: tuple[ExpectationResult, ...] = ()
    invariant_violations: tuple[dict[str, Any], ...] = ()
    events: list[dict[str, Any]] = field(factory=list, repr=False)
    error: str | None = None  # the run itself failed (a simulator error), not an expectation
    # seed 004's measures of the design (scenarios.measures); None when the run did not start
    measures: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        return self.error is None and all(e.passed for e in self.expectations)

    def group(self, group_id: str) -> GroupResult | None:
        return next((g for g in self.groups if g.group_id == group_id), None)

    def to_dict(self, *, include_events: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema_version": RESULT_SCHEMA_VERSION,
            "scenario": self.scenario,
            "description": self.description,
            "source": self.source,
            "seed": self.seed,
            "end_ms": self.end_ms,
            "passed": self.passed,
            "error": self.error,
            "groups": [g.to_dict() for g in self.groups],
            "rebalances": [_plain(r) for r in self.rebalances],
            "expectations": [e.to_dict() for e in self.expectations],
            "invariant_violations": [_plain(v) for v in self.invariant_violations],
            "event_count": len(self.events),
            "measures": _plain(self.measures),
        }
        if include_events:
            out["events"] = [_plain(e) for e in self.events]
        return out


def _plain(value: Any) -> Any:
    """JSON-friendly: tuples -> lists, enums -> names, attrs records -> dicts, bytes -> hex."""
    import enum

    import attrs

    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_plain(v) for v in value]
        return sorted(items, key=str) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, bytes):
        return value.hex()
    if attrs.has(type(value)):
        return _plain(attrs.asdict(value, recurse=False))
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
