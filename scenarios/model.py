"""A validated scenario, as frozen attrs classes.

The loader (``scenarios.loader``) builds these from YAML (or from a dict, for sweeps) after every
check has passed, so the runner can trust them: times are ints in ms, config keys are Kafka's
dotted names mapped to the snake_case fields of ``members.config.ConsumerConfig`` and
``coordinator.cluster.CoordinatorConfig``, references (consumers, topics, brokers, groups) exist.
``Scenario.data`` keeps the plain input so that ``scenarios.loader.with_overrides`` can rebuild a
variant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

if TYPE_CHECKING:
    from scenarios.actions import ActionArgs
    from scenarios.checks import Check

SCENARIO_VERSION = 1


@frozen
class Where:
    """Where something was written (for messages that point back into the file)."""

    source: str
    path: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.source} {self.path}"
        return f"{self.source}:{self.line}:{self.column} {self.path}"


@frozen
class TopicSpec:
    name: str
    partitions: int
    # replica racks per partition, e.g. (("a", "b"), ("c",)); None = no rack information
    racks: tuple[tuple[str, ...], ...] | None = None


@frozen
class NetworkSpec:
    latency_ms: int = 1
    jitter_ms: int = 0
    drop_rate: float = 0.0


@frozen
class ZooKeeperSpec:
    """``cluster.zookeeper`` (design zookeeper): servers zk-0 (the leader) .. zk-{n-1}, and how
    late each follower applies the leader's commits."""

    servers: int = 3
    lag_ms: tuple[tuple[str, int], ...] = ()


@frozen
class ClusterSpec:
    brokers: int = 3
    broker_racks: tuple[str | None, ...] | None = None
    replication_factor: int = 3
    topics: tuple[TopicSpec, ...] = ()
    # broker-side settings in CoordinatorConfig's snake_case names, e.g. group_max_size
    config: Mapping[str, Any] = field(factory=dict)
    network: NetworkSpec = NetworkSpec()
    zookeeper: ZooKeeperSpec | None = None
    # design coordinator-assigns: the brokers' strategy (group.server.assignor)
    server_assignor: str | None = None

    @property
    def offsets_partitions(self) -> int:
        return int(self.config.get("offsets_topic_num_partitions", 50))


@frozen
class ConsumerSpec:
    id: str
    group: str
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    # ConsumerConfig fields (snake_case) after defaults were merged in; group_id included
    config: Mapping[str, Any] = field(factory=dict)
    where: Where | None = field(default=None, eq=False)

    @property
    def static(self) -> bool:
        return self.config.get("group_instance_id") is not None

    @property
    def strategies(self) -> tuple[str, ...]:
        return tuple(
            self.config.get("partition_assignment_strategy", ("range", "cooperative-sticky"))
        )


@frozen
class Action:
    """One timeline step: its action's typed arguments (``scenarios.actions``) and its note."""

    at_ms: int
    args: ActionArgs
    where: Where | None = field(default=None, eq=False)
    # raw requests only: the response expectations and the name to refer to the response by
    expect: Mapping[str, Any] | None = None
    name: str | None = None
    note: str | None = None

    @property
    def kind(self) -> str:
        """The action's YAML key (start, crash, send, ...), or ``note`` for a note-only step."""
        return self.args.kind


@frozen
class Expectation:
    """Checks on a group (and its consumers) at a time, or at the end (``at_ms`` None)."""

    at_ms: int | None
    group: str | None
    # check name (state, members, ...) -> the check with its expected value (scenarios.checks)
    checks: Mapping[str, Check] = field(factory=dict)
    where: Where | None = field(default=None, eq=False)
    label: str | None = None

    @property
    def when(self) -> str:
        return "end" if self.at_ms is None else f"{self.at_ms}ms"


@frozen
class Scenario:
    name: str
    description: str = ""
    version: int = SCENARIO_VERSION
    seed: int = 0
    cluster: ClusterSpec = ClusterSpec()
    consumers: tuple[ConsumerSpec, ...] = ()
    timeline: tuple[Action, ...] = ()
    expect: tuple[Expectation, ...] = ()
    until_ms: int | None = None
    seed_note: str | None = None  # where the lesson's seed article differs from Kafka
    tags: tuple[str, ...] = ()
    design: str = "client-side"  # seed 004's designs: client-side | zookeeper | coordinator-assigns
    source: str = "<scenario>"
    data: Mapping[str, Any] = field(factory=dict, eq=False, repr=False)

    def consumer(self, consumer_id: str) -> ConsumerSpec:
        for c in self.consumers:
            if c.id == consumer_id:
                return c
        raise KeyError(consumer_id)

    @property
    def groups(self) -> tuple[str, ...]:
        seen: list[str] = []
        for c in self.consumers:
            if c.group not in seen:
                seen.append(c.group)
        return tuple(seen)

    @property
    def end_ms(self) -> int:
        """The simulated time the run stops at (explicit ``until``, else last time + 30 s)."""
        if self.until_ms is not None:
            return self.until_ms
        times = [a.at_ms for a in self.timeline] + [
            e.at_ms for e in self.expect if e.at_ms is not None
        ]
        return max(times, default=0) + DEFAULT_SETTLE_MS


DEFAULT_SETTLE_MS = 30_000
