"""The ONE place where the recorded-trace replay touches groupsim's KafkaCluster.

It plays the oracle driver's part on groupsim's side: one ``__consumer_offsets`` partition led
by broker-0 (loaded at once), or by one of two brokers (``num_brokers=2``: the coordinator moves
between them and may take ``load_ms`` to load), Kafka's counter member ids, the simulation's
Engine firing each timer at its own deadline in (deadline, set order) as the oracle's DriverTimer
does,
and log-write failures injected per operation. Everything else in tests/oracle/ sees only plain
values: responses by correlation id, records written, group snapshots and live timers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from functools import partial

import attrs

from coordinator.cluster import KafkaCluster
from coordinator.config import CoordinatorConfig
from coordinator.effects import CancelTimer, Send, SetTimer
from coordinator.errors import Errors
from coordinator.records import Record
from coordinator.result import CoordinatorResult, Step
from coordinator.timers import ExpireOffsetsKey
from coordinator.views import GroupView
from scenarios.engine import Engine

BROKER = "broker-0"
_OWNER = "cluster"  # the engine's timers are per node; here one owner holds them all
CLIENT = "client"

# The oracle's broker configs (Kafka names) -> CoordinatorConfig fields.
CONFIG_FIELDS = {
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.max.size": "group_max_size",
    "offsets.retention.check.interval.ms": "offsets_retention_check_interval_ms",
    "offsets.retention.minutes": "offsets_retention_minutes",
    "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    "group.consumer.max.size": "group_consumer_max_size",
    "group.consumer.migration.policy": "group_consumer_migration_policy",
}


def _config_value(value: object) -> object:
    """A config as the oracle got it (text): a number, or a name such as a migration policy."""
    text = str(value)
    return int(text) if text.lstrip("-").isdigit() else text


class KafkaUuidCounter(random.Random):
    """The oracle's member-id UUIDs: its n-th ``getrandbits(128)`` is n, which
    ``uuid.UUID(int=n, version=4)`` turns into ``00000000-0000-4000-8000-<n>``, the UUID the
    oracle's counter SecureRandom makes Kafka's ``UUID.randomUUID()`` return."""

    def __init__(self) -> None:
        super().__init__(0)
        self.count = 0

    def getrandbits(self, k: int) -> int:
        self.count += 1
        return self.count


def broker_node(broker: str) -> str:
    """The oracle's broker name (``b1``) as groupsim's node (``broker-1``)."""
    return f"broker-{broker.removeprefix('b')}"


def _timer_name(key: Hashable) -> str:
    """groupsim's timer key as Kafka names it (``broker-0/join-g`` -> ``join-g``)."""
    if isinstance(key, ExpireOffsetsKey):
        return "expire-group-metadata"
    return str(key).split("/", 1)[1]


class ClusterAdapter:
    def __init__(
        self,
        configs: dict[str, object],
        topics: dict[str, int] | None = None,
        *,
        num_brokers: int = 1,
    ) -> None:
        fields = {CONFIG_FIELDS[k]: _config_value(v) for k, v in configs.items()}
        config = CoordinatorConfig(offsets_topic_num_partitions=1, load_time_ms=0, **fields)
        self.leader: str | None = BROKER
        self.cluster = KafkaCluster(
            num_brokers=num_brokers,
            replication_factor=num_brokers,
            config=config,
            topics=topics or {},
            rng=KafkaUuidCounter(),
        )
        self.engine = Engine(timer_handler=self._fire)
        self._fail_first: tuple[str, str] | None = None  # advance()'s, until a timer fires
        self._written = 0
        self.responses: list[tuple[int, object, int]] = []  # (correlation id, message, t)

    # --- effects and time -------------------------------------------------------------------

    def _apply(self, result: CoordinatorResult) -> None:
        """Carry out a call's effects (its events are not compared: the replay compares values)."""
        for e in result.effects:
            if isinstance(e, SetTimer):
                self.engine.set_timer(_OWNER, e.key, e.deadline_ms)
            elif isinstance(e, CancelTimer):
                self.engine.cancel_timer(_OWNER, e.key)
            elif isinstance(e, Send):
                self.responses.append((e.correlation_id, e.message, self.now))

    def advance(self, to_ms: int, fail_first: tuple[str, str] | None = None) -> None:
        """Fire every timer due up to ``to_ms``, each at its deadline; ``fail_first`` =
        (Kafka timer name, error): the first timer's write fails if it is that timer."""
        self._fail_first = fail_first
        try:
            self.engine.run(until=to_ms)
        finally:
            self._fail_first = None

    @property
    def now(self) -> int:
        return self.engine.now

    def _fire(self, _owner: str, key: Hashable) -> None:
        fail_first, self._fail_first = self._fail_first, None  # only the first timer can fail
        inject = fail_first is not None and _timer_name(key) == fail_first[0]
        self._with_failure(
            fail_first[1] if inject and fail_first else None,
            partial(self.cluster.handle_timer, key, self.now),
        )

    def _with_failure(self, error: str | None, call: Callable[[], CoordinatorResult]) -> None:
        """Run ``call`` with its first log write failing with ``error`` (the oracle's
        ``append_error``); a failure the call did not use is withdrawn."""
        log = self.cluster.offsets_log
        if error is not None:
            log.fail_next_append(Errors[error])
        try:
            self._apply(call())
        finally:
            if error is not None:
                log._failures.clear()

    def request(
        self,
        correlation_id: int,
        request: object,
        append_error: str | None,
        broker: str | None = None,
    ) -> None:
        """``request`` sent to ``broker`` (the oracle's ``b<n>``; default the current leader,
        or broker-0 when no broker leads the partition)."""
        dst = broker_node(broker) if broker is not None else (self.leader or BROKER)
        self._with_failure(
            append_error,
            lambda: self.cluster.handle_request(dst, CLIENT, correlation_id, request, self.now),
        )

    def end_transaction(
        self, correlation_id: int, producer_id: int, commit: bool, append_error: str | None
    ) -> None:
        """The transaction coordinator's marker (KafkaCluster.complete_transaction); its
        outcome (an Errors) is answered as the op's response."""
        outcome: list[Errors] = []

        def call() -> CoordinatorResult:
            error, result = self.cluster.complete_transaction(0, producer_id, commit, self.now)
            outcome.append(error)
            return result

        self._with_failure(append_error, call)
        self.responses.append((correlation_id, outcome[0], self.now))

    def unload(self) -> None:
        """The partition's leadership leaves its broker (its parked requests are answered
        NOT_COORDINATOR) and no broker takes it over until ``load``; requests meanwhile get
        NOT_COORDINATOR. KafkaCluster has no public call for a leaderless partition on a live
        broker, so this moves it through the service's own calls (onResignation / onElection)."""
        out = Step(self.now)
        self.cluster.service.on_resignation(out, 0)
        self.cluster.topology.offsets_leader[0] = None
        self.leader = None
        self._apply(out.result())

    def load(self, broker: str | None = None, load_ms: int = 0) -> None:
        """``broker`` (default broker-0) becomes the leader: the partition is replayed, at once
        or after ``load_ms`` (the shard's load timer, ``load_time_ms``), while requests to it
        get COORDINATOR_LOAD_IN_PROGRESS."""
        node = broker_node(broker) if broker is not None else BROKER
        out = Step(self.now)
        self.cluster.topology.offsets_leader[0] = node
        self.leader = node
        service = self.cluster.service
        config = service.config
        service.config = attrs.evolve(config, load_time_ms=load_ms)  # the new shard's copy
        try:
            service.on_election(out, 0, node)
        finally:
            service.config = config
        self._apply(out.result())

    # --- what happened ----------------------------------------------------------------------

    def take_responses(self) -> list[tuple[int, object, int]]:
        out, self.responses = self.responses, []
        return out

    def take_records(self) -> list[Record]:
        records = self.cluster.offsets_log.partition(0)
        out = records[self._written :]
        self._written = len(records)
        return list(out)

    def group(self, group_id: str) -> GroupView | None:
        return self.cluster.group(group_id)

    def group_extras(self, group_id: str) -> dict[str, object]:
        """What GroupView does not show: the pending-sync ids and the new-member flag."""
        shard = self.cluster.service.shards.get(0)
        group = shard.group_manager.groups.get(group_id) if shard is not None else None
        if group is None:
            return {}
        return {
            "pending_sync_members": sorted(group.pending_sync),
            "new_member_added": group.new_member_added,
        }

    def timers(self) -> list[tuple[str, int]]:
        """Live timers as (Kafka's key, deadline)."""
        return sorted((_timer_name(k), d) for k, d in self.engine.pending(_OWNER).items())
