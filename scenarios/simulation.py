"""The deterministic simulation: one Kafka cluster, its consumers, a network, a clock and a log.

``Simulation`` drives the sans-I/O pieces (``coordinator.cluster.KafkaCluster`` and
``members.consumer.Consumer``): it delivers their messages through ``scenarios.network``, fires
their timers from ``scenarios.engine`` and records every structlog event they emit in
``sim.events``. Nothing reads a wall clock; every random choice comes from ``random.Random``
instances derived from the one ``seed``, so the same calls with the same seed give a
byte-identical event log.

Delivery rules the simulation adds to the network's (docs/runner.md):

* a request that reaches a **dead broker** is refused: the sender's ``handle_disconnect`` runs
  after ``network.disconnect_delay()`` (a reset TCP connection). When a broker fails, every request
  still outstanding on it (a parked JoinGroup, say) is failed the same way, as Kafka's
  NetworkClient fails in-flight requests when a connection closes;
* a response for a consumer that crashed or restarted since it sent the request is discarded (its
  old connection is gone), and so is anything sent to a node that is not running;
* timers of a crashed consumer are all cancelled.
"""

from __future__ import annotations

import gc
import hashlib
import random
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from assignors.api import TopicPartition
from coordinator.config import CoordinatorConfig
from coordinator.effects import CancelTimer, Send, SetTimer
from coordinator.protocol import error_name
from coordinator.result import CoordinatorResult, record_events
from coordinator.views import GroupView
from members.result import ConsumerResult
from scenarios.engine import Engine
from scenarios.eventlog import LEVELS, EventLog, make_logger, write_jsonl
from scenarios.invariants import InvariantChecker
from scenarios.network import Network, NetworkConfig
from scenarios.sim_values import Partitions, RawCall, Settled, _ConsumerSlot, _RawClient

if TYPE_CHECKING:
    from members.config import ConsumerConfig

CLUSTER = "@cluster"
"""The timer owner used for every timer the cluster sets (its keys are namespaced by broker)."""

STABLE = "STABLE"
UNJOINED = "UNJOINED"

_FIELDS = itemgetter(1)
"""An event's fields dict (the second of its ``(name, fields)`` pair), which the log stores."""


class SimulationError(Exception):
    """A misuse of the simulation API (unknown consumer, duplicate id, ...)."""


def derive_seed(seed: int, name: str) -> int:
    """A stable 64-bit seed for a named component (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256(f"{seed}/{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _gc_paused_call(method: Callable[..., Any]) -> Callable[..., Any]:
    """Run a Simulation method with the cyclic GC paused (see ``Simulation._gc_paused``)."""

    def wrapper(self: Simulation, *args: Any, **kwargs: Any) -> Any:
        with self._gc_paused():
            return method(self, *args, **kwargs)

    wrapper.__name__ = method.__name__
    wrapper.__qualname__ = method.__qualname__
    wrapper.__doc__ = method.__doc__
    return wrapper


class Simulation:
    """A cluster, consumers, a network and an event log on one simulated clock.

    Typical use::

        sim = Simulation(brokers=3, topics={"orders": 6}, seed=7)
        sim.add_consumer("C1", ConsumerConfig(group_id="g"), topics=["orders"])
        sim.add_consumer("C2", ConsumerConfig(group_id="g"), topics=["orders"])
        sim.start()
        assert sim.run_until_stable("g")
        sim.assignment("C1")  # -> [TopicPartition("orders", 0), ...]
    """

    def __init__(
        self,
        *,
        brokers: int = 3,
        topics: Mapping[str, int] | None = None,
        coordinator_config: CoordinatorConfig | None = None,
        broker_racks: Sequence[str | None] | None = None,
        seed: int = 0,
        network: NetworkConfig | None = None,
        log_level: str = "debug",
        check_invariants: bool = False,
        raise_on_violation: bool = False,
        cluster_factory: Callable[..., Any] | None = None,
        consumer_factory: Callable[..., Any] | None = None,
        pause_gc: bool = True,
    ) -> None:
        self.seed = seed
        self.log = EventLog()
        self.events: list[dict[str, Any]] = self.log.events
        self.logger = make_logger(self.log, log_level)
        # run_until_stable follows groups through their logged (info) events; a muted level
        # records none, so it must look at every group instead
        self._logs_group_events = LEVELS[log_level] <= LEVELS["info"]
        # the cluster's events (all at info) go straight into the log when the logger would only
        # append them there (its usual processor chain, with no bound context)
        direct = getattr(self.logger, "_events", None)
        self._direct_events: list[dict[str, Any]] | None = (
            direct
            if direct is self.events
            and self._logs_group_events
            and not getattr(self.logger, "_context", None)
            else None
        )
        self.engine = Engine(self._on_timer)
        self.network = Network(
            network or NetworkConfig(), random.Random(derive_seed(seed, "network"))
        )
        self._consumer_factory = consumer_factory
        self.pause_gc = pause_gc
        if cluster_factory is None:
            from coordinator.cluster import KafkaCluster

            cluster_factory = KafkaCluster
        self.cluster = cluster_factory(
            num_brokers=brokers,
            config=coordinator_config or CoordinatorConfig(),
            topics=dict(topics or {}),
            broker_racks=broker_racks,
            seed=derive_seed(seed, "cluster"),
        )
        self._brokers: frozenset[str] = frozenset(self.cluster.broker_nodes)
        # broker -> failures so far: a request sent before a failure and arriving after it was
        # on a connection that is gone, whether or not the broker is back by then
        self._broker_epoch: dict[str, int] = dict.fromkeys(self.cluster.broker_nodes, 0)
        self._consumers: dict[str, _ConsumerSlot] = {}
        # group id (None: a consumer without one) -> its consumers
        self._by_group: dict[str | None, list[_ConsumerSlot]] = {}
        self._raw: dict[str, _RawClient] = {}
        # (client, correlation_id) -> (broker, incarnation): requests awaiting an answer
        self._outstanding: dict[tuple[str, int], tuple[str, int]] = {}
        # (client, api) -> delays still to apply, in order: the next such requests are held
        # at the broker that long before the coordinator handles them (sim.delay_request)
        self._held: dict[tuple[str, str], list[int]] = {}
        # every member id a consumer ever had -> its consumer id (for past members too)
        self._member_names: dict[str, str] = {}
        self.check_invariants = check_invariants
        self.raise_on_violation = raise_on_violation
        self._invariants: InvariantChecker | None = None
        if check_invariants:
            self._invariants = InvariantChecker(self)

    # --- clock --------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        """The simulated time in ms."""
        return self.engine.now

    def _emit(self, event: str, **fields: Any) -> None:
        self.logger.info(event, t_ms=self.engine.now, **fields)

    # --- consumers ----------------------------------------------------------------------------

    @_gc_paused_call
    def add_consumer(
        self,
        consumer_id: str,
        config: Any = None,
        *,
        topics: Iterable[str] | None = None,
        pattern: str | None = None,
        listener: Any = None,
        start: bool = False,
        **config_fields: Any,
    ) -> Any:
        """Create consumer ``consumer_id`` (a node name such as ``"C1"``); ``start`` it now if asked.

        ``config`` is a ``members.config.ConsumerConfig``; without one, ``config_fields`` build it
        (``group_id="g", partition_assignment_strategy=["cooperative-sticky"]``, ...), with
        ``client_id`` defaulting to ``consumer_id`` as in scenario files.
        """
        if config is None:
            import attrs

            from members.config import ConsumerConfig

            known = {f.name for f in attrs.fields(ConsumerConfig)}
            unknown = sorted(set(config_fields) - known)
            if unknown:
                raise SimulationError(
                    f"unknown consumer setting(s) {', '.join(unknown)}; "
                    f"ConsumerConfig has: {', '.join(sorted(known))}"
                )
            # client.id defaults to the consumer's name, as in scenario files (Kafka's own default,
            # "consumer-<group>-<n>", is per process; one name for both keeps them comparable:
            # member ids, hence the range/roundrobin order, are "<client.id>-<uuid>")
            config_fields.setdefault("client_id", consumer_id)
            config = ConsumerConfig(**config_fields)
        elif config_fields:
            raise SimulationError("pass either a ConsumerConfig or its fields, not both")
        if consumer_id in self._consumers or consumer_id in self._brokers:
            raise SimulationError(f"node {consumer_id!r} already exists")
        if consumer_id == CLUSTER or consumer_id in self._raw:
            raise SimulationError(f"node name {consumer_id!r} is reserved")
        factory = self._consumer_factory
        if factory is None:
            from members.consumer import Consumer

            factory = Consumer
        consumer = factory(
            consumer_id,
            config,
            bootstrap=list(self.cluster.broker_nodes),
            topics=list(topics) if topics is not None else None,
            pattern=pattern,
            listener=listener,
            seed=derive_seed(self.seed, f"consumer/{consumer_id}"),
        )
        slot = _ConsumerSlot(consumer)
        slot.standing = getattr(consumer, "group_standing", None) or (
            lambda: _group_standing(consumer)  # a stand-in without the method
        )
        self._consumers[consumer_id] = slot
        self._by_group.setdefault(getattr(config, "group_id", None), []).append(slot)
        if start:
            self.start([consumer_id])
        return consumer

    def add_consumers(
        self,
        count: int,
        *,
        prefix: str = "C",
        first: int = 1,
        topics: Iterable[str] | None = None,
        pattern: str | None = None,
        start: bool = False,
        **config_fields: Any,
    ) -> list[str]:
        """Add ``count`` alike consumers named ``C1``, ``C2``, ...; returns their ids.

        A ``group_instance_id`` containing ``{}`` is formatted with each consumer's number, so
        ``group_instance_id="inst-{}"`` gives every member its own static identity.
        """
        topic_list = list(topics) if topics is not None else None
        ids = []
        for number in range(first, first + count):
            fields = dict(config_fields)
            instance = fields.get("group_instance_id")
            if isinstance(instance, str) and "{}" in instance:
                fields["group_instance_id"] = instance.format(number)
            cid = f"{prefix}{number}"
            self.add_consumer(cid, topics=topic_list, pattern=pattern, **fields)
            ids.append(cid)
        if start:
            self.start(ids)
        return ids

    def consumer(self, consumer_id: str) -> Any:
        """The live ``members.consumer.Consumer`` object (read its state; drive it via the sim)."""
        return self._slot(consumer_id).consumer

    @property
    def consumer_ids(self) -> list[str]:
        return list(self._consumers)

    def _slot(self, consumer_id: str) -> _ConsumerSlot:
        try:
            return self._consumers[consumer_id]
        except KeyError:
            known = ", ".join(self._consumers) or "none"
            raise SimulationError(f"unknown consumer {consumer_id!r} (known: {known})") from None

    def _ids(self, ids: str | Iterable[str] | None) -> list[str]:
        if ids is None:
            return list(self._consumers)
        if isinstance(ids, str):
            return [ids]
        return list(ids)

    @_gc_paused_call
    def start(self, ids: str | Iterable[str] | None = None) -> None:
        """Start consumers (all not yet started when ``ids`` is None): their first poll().

        Starting a closed consumer opens it again; starting a crashed one is ``restart``. One
        still closing (its final commit, or the answers close() waits for, outstanding) is
        refused: wait until it is CLOSED.
        """
        chosen = self._ids(ids)
        for cid in chosen:  # refuse before starting any of them
            slot = self._slot(cid)
            if slot.running and slot.closed and self.status(cid) == "CLOSING":
                raise SimulationError(
                    f"consumer {cid!r} is still closing (its final commit or the "
                    "coordinator's answers close() waits for are outstanding); "
                    "start it again once it is CLOSED"
                )
        for cid in chosen:
            slot = self._slot(cid)
            if ids is None and slot.ever_started:
                continue
            if slot.ever_started and not slot.running:
                self.restart(cid)
                continue
            if slot.running and not slot.closed:
                raise SimulationError(f"consumer {cid!r} is already running")
            if slot.closed:
                slot.incarnation += 1  # a reopened consumer has new connections
            slot.running = True
            slot.ever_started = True
            slot.closed = False
            self._emit("sim_consumer_started", node=cid)
            self._apply(cid, slot.consumer.start(self.engine.now))
        self._after_action()

    @_gc_paused_call
    def close(self, consumer_id: str, timeout_ms: int | None = None) -> None:
        """A clean shutdown: callbacks, a final commit, LeaveGroup (dynamic members only), then
        the wait for the coordinator's answers (the consumer is CLOSING until it ends).

        ``timeout_ms`` is KafkaConsumer.close(Duration)'s timeout (capped at
        request.timeout.ms); None is close(), Kafka's 30 s default.
        """
        slot = self._slot(consumer_id)
        if timeout_ms is None:
            self._emit("sim_consumer_closed", node=consumer_id)
            result = slot.consumer.close(self.engine.now)
        else:
            if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms < 0:
                raise SimulationError(
                    f"close timeout must be a non-negative integer of ms, got {timeout_ms!r}"
                )
            self._emit("sim_consumer_closed", node=consumer_id, timeout_ms=timeout_ms)
            result = slot.consumer.close(self.engine.now, timeout_ms=timeout_ms)
        slot.closed = True
        self._apply(consumer_id, result)
        self._after_action()

    @_gc_paused_call
    def crash(self, consumer_id: str) -> None:
        """The process dies: silence, only the session timeout will notice."""
        slot = self._slot(consumer_id)
        self._emit("sim_consumer_crashed", node=consumer_id)
        # a dead process sends nothing and sets no timer: only its event is recorded
        self._apply(consumer_id, slot.consumer.crash(self.engine.now))
        slot.running = False
        slot.incarnation += 1
        self.engine.cancel_owner_timers(consumer_id)
        self._after_action()

    @_gc_paused_call
    def restart(self, consumer_id: str, config: ConsumerConfig | None = None) -> None:
        """A new incarnation of the process (a running one is killed first, as by kill -9).

        A dynamic member comes back with a new member id; a static member keeps its
        group.instance.id and takes the coordinator's replacement path (KIP-345). With
        ``config`` (a ``members.config.ConsumerConfig`` of the same group), the new process runs
        it: e.g. ``group.protocol`` changed, one step of a rolling upgrade to KIP-848.
        """
        slot = self._slot(consumer_id)
        slot.incarnation += 1
        self.engine.cancel_owner_timers(consumer_id)
        slot.running = True
        slot.closed = False
        slot.ever_started = True
        if config is None:
            self._emit("sim_consumer_restarted", node=consumer_id)
        else:
            self._emit(
                "sim_consumer_restarted", node=consumer_id, group_protocol=config.group_protocol
            )
        now = self.engine.now
        effects = (
            slot.consumer.restart(now) if config is None else slot.consumer.restart(now, config)
        )
        self._apply(consumer_id, effects)
        self._after_action()

    @_gc_paused_call
    def subscribe(
        self, consumer_id: str, topics: Iterable[str] | None, pattern: str | None = None
    ) -> None:
        slot = self._slot(consumer_id)
        topic_list = list(topics) if topics is not None else None
        if topic_list and pattern:
            raise SimulationError("subscribe to a topic list or a pattern, not both")
        self._emit("sim_consumer_subscribe", node=consumer_id, topics=topic_list, pattern=pattern)
        self._apply(
            consumer_id, slot.consumer.subscribe(topic_list, self.engine.now, pattern=pattern)
        )
        self._after_action()

    @_gc_paused_call
    def commit(self, consumer_id: str) -> None:
        """A manual commitAsync of the consumed positions."""
        slot = self._slot(consumer_id)
        self._emit("sim_consumer_commit", node=consumer_id)
        self._apply(consumer_id, slot.consumer.commit(self.engine.now))
        self._after_action()

    @_gc_paused_call
    def stall(self, consumer_id: str, duration_ms: int) -> None:
        """The application blocks for ``duration_ms`` (no poll(): max.poll.interval.ms may expire)."""
        slot = self._slot(consumer_id)
        if duration_ms < 0:
            raise SimulationError(f"stall duration must be >= 0, got {duration_ms}")
        self._emit("sim_consumer_stall", node=consumer_id, duration_ms=duration_ms)
        self._apply(consumer_id, slot.consumer.stall(duration_ms, self.engine.now))
        self._after_action()

    @_gc_paused_call
    def delay_request(self, node: str, api: str, delay_ms: int) -> None:
        """The next ``api`` request ``node`` sends to a broker reaches the coordinator
        ``delay_ms`` late: the broker's thread that reads it stalls on it (a network or request
        handler thread blocked), while requests on other connections, a resend of it included,
        are handled at once. The client neither knows nor waits: its own request timeout runs."""
        self._slot(node)
        if delay_ms <= 0:
            raise SimulationError(f"a request delay must be > 0, got {delay_ms}")
        self._held.setdefault((node, api), []).append(delay_ms)

    # --- cluster ------------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> None:
        self.cluster.create_topic(name, partitions)
        self._emit("sim_topic_created", node=CLUSTER, topic=name, partitions=partitions)

    def add_partitions(self, name: str, count: int) -> None:
        """Grow topic ``name`` to ``count`` partitions in total (Kafka's CreatePartitions)."""
        self.cluster.add_partitions(name, count)
        self._emit("sim_partitions_added", node=CLUSTER, topic=name, partitions=count)

    def delete_topic(self, name: str) -> None:
        """Delete topic ``name``; the coordinators delete the groups' committed offsets of it."""
        if name not in self.cluster.topics():
            raise ValueError(f"unknown topic {name!r}")
        self._emit("sim_topic_deleted", node=CLUSTER, topic=name)
        self._apply_cluster(self.cluster.delete_topic(name, self.engine.now))

    def _broker(self, node: str) -> str:
        """``node`` if it is a broker; refused before anything is logged otherwise."""
        if node not in self._brokers:
            known = ", ".join(self.cluster.broker_nodes)
            raise SimulationError(f"unknown broker {node!r} (brokers: {known})")
        return node

    @_gc_paused_call
    def fail_broker(self, node: str) -> None:
        """Kill a broker: its coordinators move; requests outstanding on it fail (disconnect)."""
        self._broker(node)
        self._emit("sim_broker_failed", node=node)
        self._apply_cluster(self.cluster.fail_broker(node, self.engine.now))
        self._broker_epoch[node] += 1
        at = self.engine.now + self.network.disconnect_delay()
        drained_at = self.network.drained_at
        for (client, cid), (broker, incarnation) in list(self._outstanding.items()):
            if broker == node:
                self.engine.schedule(
                    drained_at(node, client, at), self._disconnect, (client, node, cid, incarnation)
                )
        self._after_action()

    @_gc_paused_call
    def restart_broker(
        self,
        node: str,
        config: CoordinatorConfig | None = None,
        changes: Mapping[str, str] | None = None,
    ) -> None:
        """Bring a failed broker back; with ``config`` it comes back with that configuration
        (``changes``, the settings that differ, are logged first as ``sim_broker_reconfigured``)."""
        self._broker(node)
        if config is not None:
            self._emit("sim_broker_reconfigured", node=node, config=dict(changes or {}))
        self._emit("sim_broker_restarted", node=node)
        now = self.engine.now
        self._apply_cluster(
            self.cluster.restart_broker(node, now)
            if config is None
            else self.cluster.restart_broker(node, now, config)
        )
        self._after_action()

    def partition_network(
        self, groups_of_nodes: Iterable[Iterable[str]], duration_ms: int | None = None
    ) -> None:
        """Split the network into islands; nodes not named share one more island.

        Heals by itself after ``duration_ms`` (never, when None: call ``heal_network``).
        """
        groups = [sorted(group) for group in groups_of_nodes]
        until = None if duration_ms is None else self.engine.now + duration_ms
        self.network.partition(groups, until)
        self._emit("sim_network_partitioned", node=CLUSTER, groups=groups, until_ms=until)
        if until is not None:
            self.engine.schedule(until, self._heal_if_due, until)

    def heal_network(self) -> None:
        self.network.heal()
        self._emit("sim_network_healed", node=CLUSTER)

    def _heal_if_due(self, until: int) -> None:
        if self.network.partition_until == until:
            self.heal_network()

    # --- raw requests -------------------------------------------------------------------------

    def send_raw(self, request: object, to_broker: str, from_node: str = "raw") -> RawCall:
        """Send ``request`` by hand from a bare client node; the returned call gets the response.

        For tests that need a protocol step no well-behaved consumer would take, e.g. a JoinGroup
        with an empty member id to see MEMBER_ID_REQUIRED, or a member that never sends SyncGroup.
        """
        self._broker(to_broker)
        if from_node in self._consumers or from_node in self._brokers:
            raise SimulationError(f"{from_node!r} is a simulated node, not a raw client")
        client = self._raw.setdefault(from_node, _RawClient())
        cid = client.next_correlation_id
        client.next_correlation_id += 1
        call = RawCall(from_node, to_broker, cid, request, self.engine.now)
        client.calls[cid] = call
        self._send(Send(from_node, to_broker, cid, request))
        return call

    # --- scheduling and running ---------------------------------------------------------------

    def at(self, t_ms: int, action: Callable[[], object]) -> None:
        """Run ``action()`` (e.g. ``lambda: sim.crash("C1")``) at simulated time ``t_ms``."""
        if t_ms < self.engine.now:
            raise SimulationError(f"cannot schedule at {t_ms} ms: the clock is at {self.now} ms")
        self.engine.schedule(t_ms, _call, action)

    def after(self, delay_ms: int, action: Callable[[], object]) -> None:
        self.at(self.engine.now + delay_ms, action)

    def step(self) -> bool:
        """Run the next event (message, timer or action); False when nothing is scheduled."""
        ran = self.engine.step()
        if ran and self._invariants is not None:
            self._invariants.check()
        return ran

    def peek(self) -> int | None:
        """When the next event is due (simulated ms), or None."""
        return self.engine.peek()

    @contextmanager
    def _gc_paused(self) -> Iterator[None]:
        """Pause Python's cyclic garbage collector while the clock runs (``pause_gc``).

        A simulation keeps millions of live event dicts, and the collector's periodic
        traversals of them cost about two thirds of a large run (the 1,000-group benchmark).
        Running the simulation creates no reference cycles per event, so nothing is lost; any
        cyclic garbage is found by the next full collection once the collector is back on.
        Nested runs are no-ops.
        """
        if not self.pause_gc or not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            if gc.get_freeze_count() == 0:  # never unfreeze what someone else froze
                # What survived the run is long-lived state (groups, offsets, the log): move it
                # straight to the oldest generation (freeze, then unfreeze), where the next full
                # collection still examines it, rather than have the young collections that
                # follow re-enabling trace all of it again (about 15 % of the benchmark).
                gc.freeze()
                gc.unfreeze()
            gc.enable()

    def run(
        self,
        until: int | None = None,
        *,
        max_events: int | None = None,
        after_event: Callable[[], object] | None = None,
    ) -> int:
        """Run events up to ``until`` ms (the clock then reads ``until``); returns events run.

        ``after_event()`` (optional) is called after every event, after the invariant checks: an
        observer that reads state (the browser page's snapshots) and must not change any."""
        if until is not None and until < self.engine.now:
            raise SimulationError(f"cannot run until {until} ms: the clock is at {self.now} ms")
        with self._gc_paused():
            return self._run(until, max_events, after_event)

    def _run(
        self,
        until: int | None,
        max_events: int | None,
        observer: Callable[[], object] | None = None,
    ) -> int:
        checker = self._invariants
        after: Callable[[], object] | None = checker.check if checker is not None else None
        if observer is not None:
            after = observer if checker is None else _both(checker.check, observer)
        return self.engine.run(until=until, max_events=max_events, after_event=after)

    def run_for(self, duration_ms: int) -> int:
        return self.run(until=self.engine.now + duration_ms)

    def run_until(self, predicate: Callable[[], bool], timeout_ms: int = 600_000) -> bool:
        """Run until ``predicate()`` holds (checked whenever the clock is about to move on), at
        most ``timeout_ms``; whether it held (``Engine.run(until=predicate)``)."""
        checker = self._invariants
        with self._gc_paused():
            return self.engine.run(
                until=predicate,
                deadline=self.engine.now + timeout_ms,
                after_event=checker.check if checker is not None else None,
            )

    def run_until_stable(
        self,
        group_id: str | Iterable[str],
        timeout_ms: int = 600_000,
        *,
        exact_members: bool = True,
    ) -> Settled:
        """Run until ``group_id`` (or every group of a list) is settled; falsy on timeout.

        The answer is truthy or falsy like a bool; a falsy one's ``repr`` (which pytest shows
        under a failed ``assert``) says where each unsettled group and its consumers stopped.
        """
        if not isinstance(group_id, str):
            group_id = list(group_id)  # an iterator is read twice below
        groups = [group_id] if isinstance(group_id, str) else list(dict.fromkeys(group_id))
        if self._run_until_stable(group_id, timeout_ms, exact_members):
            return Settled(True, "")
        unsettled = [g for g in groups if not self.is_stable(g, exact_members)]
        return Settled(False, f"not settled at t={self.now} ms: " + self.describe_groups(unsettled))

    def describe_groups(self, group_ids: Iterable[str]) -> str:
        """Each group's state, generation, members, and its consumers' states (for messages)."""
        parts = []
        for g in group_ids:
            clients = ", ".join(
                f"{cid}={self.client_state(cid)}"
                for cid, slot in self._consumers.items()
                if slot.running and not slot.closed and slot.consumer.config.group_id == g
            )
            parts.append(
                f"group {g} {self.group_state(g)} generation {self.generation(g)} "
                f"members {self.members(g)}; consumers: {clients or 'none running'}"
            )
        return "; ".join(parts)

    def _run_until_stable(
        self, group_id: str | Iterable[str], timeout_ms: int, exact_members: bool
    ) -> bool:
        """Run until ``group_id`` (or every group of a list) is settled; False on timeout.

        Settled (``is_stable``): the group is Stable and every running consumer of the group is
        STABLE at the group's generation with no rejoin pending (so a cooperative follow-up round
        is waited for, and a finished join the consumer has not applied yet), and the group's
        members are exactly those consumers (a crashed member is waited out until its session
        expires). A consumer subscribed to nothing takes no part. With ``exact_members=False`` only the consumers
        that are members now are looked at (a member that left and is still rejoining, or a dead
        one not yet expired, is ignored).

        For many groups, a group is re-examined only when an event naming it was logged since
        the last look: whatever changes a group's or a member's state logs an event with its
        ``group_id``, so this is exact, and linear in the events rather than groups x instants.
        With ``log_level="warning"`` those events are not recorded, so every group is examined
        at every instant instead (correct, only slower).
        """
        if isinstance(group_id, str):
            return self.run_until(lambda: self.is_stable(group_id, exact_members), timeout_ms)
        if not self._logs_group_events:
            ordered = list(dict.fromkeys(group_id))
            return self.run_until(
                lambda: all(self.is_stable(g, exact_members) for g in ordered), timeout_ms
            )
        groups = set(group_id)
        unsettled = {g for g in groups if not self.is_stable(g, exact_members)}
        events = self.events
        seen = len(events)

        def all_settled() -> bool:
            nonlocal seen
            end = len(events)
            if end != seen:
                touched = set(map(dict.get, events[seen:end], repeat("group_id")))
                seen = end
                # is_stable only reads state, so the (hash-dependent) set order is harmless
                for g in groups & touched:
                    if self.is_stable(g, exact_members):
                        unsettled.discard(g)
                    else:
                        unsettled.add(g)
            return not unsettled

        return self.run_until(all_settled, timeout_ms)

    def is_stable(self, group_id: str, exact_members: bool = True) -> bool:
        """See ``run_until_stable``."""
        # the consumers first: cheap attribute reads that fail fast mid-rebalance, before the
        # coordinator's view (a snapshot of every member) is built
        candidates = []
        generations = set()
        for slot in self._by_group.get(group_id, ()):
            if not slot.running or slot.closed:
                continue
            standing = slot.standing()  # type: ignore[misc]
            if standing is None:
                continue  # failed, or subscribed to nothing: Kafka's consumer joins no group then
            stable, generation_id = standing
            if exact_members and not stable:
                return False
            candidates.append((slot.consumer, stable))
            generations.add(generation_id)
        if exact_members and len(generations) > 1:
            return False
        view = self.cluster.group(group_id)
        if view is None or view.state != "Stable":
            return False
        generation = view.generation_id
        member_ids = set(view.member_ids)
        live = 0
        for consumer, stable in candidates:
            in_group = consumer.member_id in member_ids
            if not exact_members and not in_group:
                continue
            if not in_group or not stable or consumer.generation_id != generation:
                return False
            live += 1
        return not exact_members or live == len(member_ids)

    # --- effects and delivery -----------------------------------------------------------------

    def _after_action(self) -> None:
        if self._invariants is not None:
            self._invariants.check()

    def _apply_cluster(self, result: CoordinatorResult) -> None:
        self._apply(CLUSTER, result)

    def _apply(self, owner: str, result: CoordinatorResult | ConsumerResult) -> None:
        """What one call of the cluster or of a consumer returned: record its events in the log
        (in the order they happened), then carry out its effects. This is the one place events
        reach the log: neither the coordinator nor the consumers log by themselves."""
        events = result.events
        if events:
            log = self._direct_events
            if log is not None:
                # the logger's fast path, inlined: each event's fields dict becomes the entry,
                # stamped here and added by one extend (no append call per event: this loop
                # runs for every event of a run)
                for seq, (name, fields) in enumerate(events, len(log)):
                    fields["event"] = name
                    fields["seq"] = seq
                log.extend(map(_FIELDS, events))
            elif self._logs_group_events:
                record_events(events, self.logger)
        effects = result.effects
        if not effects:
            return
        engine = self.engine
        for effect in effects:
            # exact types (as before): mypy narrows ``type(effect) is X`` itself
            kind = type(effect)
            if kind is Send:
                self._send(effect)  # type: ignore[arg-type]
            elif kind is SetTimer:
                engine.set_timer(owner, effect.key, effect.deadline_ms)  # type: ignore[union-attr]
            elif kind is CancelTimer:
                engine.cancel_timer(owner, effect.key)  # type: ignore[union-attr]
            else:
                raise TypeError(f"{owner} returned {effect!r}, which is not an effect")

    def _send(self, send: Send) -> None:
        src, dst, cid = send.src, send.dst, send.correlation_id
        now = self.engine.now
        to_broker = dst in self._brokers
        if to_broker:
            slot = self._consumers.get(src)
            self._outstanding[(src, cid)] = (dst, slot.incarnation if slot else 0)
        at = self.network.arrival(src, dst, now)
        if at is None:
            # a lost request, or a lost answer: the request stays in flight on its connection,
            # so a broker failure (or the partition's disconnect below) still fails it
            reachable = self.network.can_reach(src, dst)
            self._emit(
                "sim_message_lost",
                node=src,
                src=src,
                dst=dst,
                correlation_id=cid,
                api=type(send.message).__name__,
                reason="dropped" if reachable else "network partition",
            )
            notice = self.network.config.partition_disconnect_ms
            if not reachable and notice is not None:
                # the client of the request (the sender, or the addressee of a lost answer)
                # learns that its connection timed out
                client, broker = (src, dst) if to_broker else (dst, src)
                entry = self._outstanding.get((client, cid))
                if entry is not None and entry[0] == broker:
                    self.engine.schedule(
                        self.network.drained_at(broker, client, now + notice),
                        self._disconnect,
                        (client, broker, cid, entry[1]),
                    )
            return
        if to_broker:
            if self._held:
                at = self._maybe_hold(send, at)
            self.engine.schedule(at, self._deliver_request, (send, self._broker_epoch[dst]))
        else:
            self.engine.schedule(at, self._deliver, send)

    def _maybe_hold(self, send: Send, at: int) -> int:
        """When the request is handled: ``at``, or later if ``delay_request`` holds it."""
        api = type(send.message).__name__.removesuffix("Request")
        delays = self._held.get((send.src, api))
        if not delays:
            return at
        delay = delays.pop(0)
        if not delays:
            del self._held[(send.src, api)]
        self._emit(
            "sim_request_delayed",
            node=send.src,
            src=send.src,
            dst=send.dst,
            correlation_id=send.correlation_id,
            api=api,
            delay_ms=delay,
            handled_at_ms=at + delay,
        )
        return at + delay

    def _deliver_request(self, arg: tuple[Send, int]) -> None:
        send, epoch = arg
        src, dst, cid = send.src, send.dst, send.correlation_id
        now = self.engine.now
        if epoch != self._broker_epoch[dst]:
            return  # cut off by a broker failure, which already failed it (fail_broker)
        if not self.cluster.is_alive(dst):
            entry = self._outstanding.get((src, cid))
            if entry is not None:
                self.engine.schedule(
                    self.network.drained_at(dst, src, now + self.network.disconnect_delay()),
                    self._disconnect,
                    (src, dst, cid, entry[1]),
                )
            return
        self._apply(CLUSTER, self.cluster.handle_request(dst, src, cid, send.message, now))

    def _deliver(self, send: Send) -> None:
        """An answer (or any message to a non-broker) arriving at its destination."""
        src, dst, cid = send.src, send.dst, send.correlation_id
        now = self.engine.now
        entry = self._outstanding.pop((dst, cid), None)
        slot = self._consumers.get(dst)
        if slot is not None:
            if entry is None or not slot.running or entry[1] != slot.incarnation:
                return  # the connection this answer belongs to is gone
            consumer = slot.consumer
            self._apply(dst, consumer.handle_response(src, cid, send.message, now))
            member_id = consumer.member_id
            if member_id and self._member_names.get(member_id) is None:
                self._member_names[member_id] = dst
            return
        raw = self._raw.get(dst)
        if raw is not None and cid in raw.calls:
            call = raw.calls[cid]
            call.response = send.message
            call.received_ms = now
            self._emit(
                "sim_raw_response",
                node=dst,
                src=src,
                dst=dst,
                correlation_id=cid,
                api=type(send.message).__name__,
                error=error_name(send.message),
            )

    def _disconnect(self, arg: tuple[str, str, int, int]) -> None:
        client, broker, cid, incarnation = arg
        entry = self._outstanding.get((client, cid))
        if entry is None or entry != (broker, incarnation):
            return  # answered meanwhile, or the client restarted
        del self._outstanding[(client, cid)]
        slot = self._consumers.get(client)
        if slot is not None:
            consumer = slot.consumer
            if (
                not slot.running
                or slot.incarnation != incarnation
                or not getattr(consumer, "alive", True)
            ):
                return  # a crashed or closed process has no connection left to see break
            self._emit("sim_disconnected", node=client, src=client, dst=broker, correlation_id=cid)
            self._apply(client, consumer.handle_disconnect(broker, cid, self.engine.now))
            return
        self._emit("sim_disconnected", node=client, src=client, dst=broker, correlation_id=cid)
        raw = self._raw.get(client)
        if raw is not None and cid in raw.calls:
            raw.calls[cid].disconnected = True

    def _on_timer(self, owner: str, key: Hashable) -> None:
        now = self.engine.now
        if owner == CLUSTER:
            self._apply(CLUSTER, self.cluster.handle_timer(key, now))
            return
        slot = self._consumers.get(owner)
        if slot is not None and slot.running:
            self._apply(owner, slot.consumer.handle_timer(key, now))

    # --- queries ------------------------------------------------------------------------------

    def group(self, group_id: str) -> GroupView | None:
        """The coordinator's view of the group (None while no live coordinator has it)."""
        return self.cluster.group(group_id)

    def group_state(self, group_id: str) -> str | None:
        """The group's state; a KIP-848 consumer group's (Empty, Assigning, Reconciling, Stable)
        when no classic group has the id."""
        view = self.cluster.group(group_id)
        if view is not None:
            return view.state
        modern = self.cluster.consumer_group(group_id)
        return modern.state if modern is not None else None

    def generation(self, group_id: str) -> int | None:
        """The generation; a KIP-848 consumer group's group epoch."""
        view = self.cluster.group(group_id)
        if view is not None:
            return view.generation_id
        modern = self.cluster.consumer_group(group_id)
        return modern.group_epoch if modern is not None else None

    def protocol(self, group_id: str) -> str | None:
        """The chosen assignor (JoinGroup's protocol name), e.g. ``"range"``."""
        view = self.cluster.group(group_id)
        return view.protocol_name if view is not None else None

    def leader_member_id(self, group_id: str) -> str | None:
        view = self.cluster.group(group_id)
        return view.leader_id if view is not None else None

    def leader(self, group_id: str) -> str | None:
        """The consumer id (``"C1"``) of the group's leader, or None."""
        member_id = self.leader_member_id(group_id)
        return self.consumer_for_member(member_id) if member_id else None

    def consumer_for_member(self, member_id: str) -> str | None:
        """The consumer id that holds (or held) ``member_id``."""
        if not member_id:
            return None
        for cid, slot in self._consumers.items():
            if slot.consumer.member_id == member_id:
                return cid
        return self._member_names.get(member_id)

    def members(self, group_id: str) -> list[str]:
        """Consumer ids of the group's members in the coordinator's order (raw member ids for
        members that are not simulated consumers, e.g. ones joined with ``send_raw``)."""
        view = self.cluster.group(group_id)
        if view is None:
            return []
        return [self.consumer_for_member(m) or m for m in view.member_ids]

    def coordinator(self, group_id: str) -> str | None:
        return self.cluster.coordinator_for(group_id)

    def client_state(self, consumer_id: str) -> str:
        """UNJOINED, PREPARING_REBALANCE, COMPLETING_REBALANCE or STABLE (Kafka's MemberState)."""
        return str(_client_state(self._slot(consumer_id).consumer))

    def status(self, consumer_id: str) -> str:
        """The simulated process: NEW, RUNNING, CLOSING, CLOSED, CRASHED or FAILED (fatal error)."""
        status = getattr(self._slot(consumer_id).consumer, "status", None)
        return str(getattr(status, "value", status))

    def is_running(self, consumer_id: str) -> bool:
        slot = self._slot(consumer_id)
        return slot.running and not slot.closed

    def assignment(self, consumer_id: str) -> list[TopicPartition]:
        """The partitions the consumer currently owns, sorted ([] while it is not running)."""
        slot = self._slot(consumer_id)
        if not slot.running:
            return []
        return sorted(_owned(slot.consumer))

    def assignments(self, group_id: str) -> dict[str, Partitions]:
        """consumer id -> owned partitions, for the running consumers of ``group_id``.

        The lists compare equal to lists of ``"topic-N"`` strings as well (``Partitions``).
        """
        return {
            cid: Partitions(sorted(_owned(slot.consumer)))
            for cid, slot in self._consumers.items()
            if slot.running and not slot.closed and slot.consumer.config.group_id == group_id
        }

    def committed_offsets(self, group_id: str) -> dict[tuple[str, int], int]:
        return self.cluster.committed_offsets(group_id)

    def rebalances(self, group_id: str | None = None) -> list[Any]:
        """The rebalance history (``scenarios.history.RebalanceRecord``), oldest first."""
        from scenarios.history import rebalances_from_events

        records = rebalances_from_events(self.events)
        return [r for r in records if group_id is None or r.group_id == group_id]

    def events_named(self, name: str, **match: Any) -> list[dict[str, Any]]:
        """Every event called ``name`` whose fields equal ``match``."""
        return [
            e
            for e in self.events
            if e.get("event") == name and all(e.get(k) == v for k, v in match.items())
        ]

    @property
    def violations(self) -> list[dict[str, Any]]:
        """Invariant violations found so far (empty unless ``check_invariants``)."""
        return [] if self._invariants is None else list(self._invariants.violations)

    @property
    def anomalies(self) -> list[dict[str, Any]]:
        """What the invariant checks saw that Kafka allows (``scenarios.invariants``)."""
        return [] if self._invariants is None else list(self._invariants.anomalies)

    def write_log(self, target: Any) -> None:
        """Write the event log as JSON lines with sorted keys."""
        write_jsonl(self.events, target)


def _both(first: Callable[[], object], then: Callable[[], object]) -> Callable[[], None]:
    """One after-event hook calling two (the invariant checks, then an observer)."""

    def both() -> None:
        first()
        then()

    return both


def _call(action: Callable[[], object]) -> None:
    action()


def _client_state(consumer: Any) -> Any:
    state = consumer.state
    return getattr(state, "name", state)


def _owned(consumer: Any) -> Iterable[TopicPartition]:
    owned = getattr(consumer, "owned", None)
    if owned is None:
        owned = getattr(consumer, "assignment", ())
    return owned or ()


def _group_standing(consumer: Any) -> tuple[bool, int] | None:
    """``Consumer.group_standing`` read from a consumer stand-in's duck-typed attributes: None
    when it takes no part (failed, or UNJOINED with nothing to join), else whether it is settled
    (STABLE with no rejoin pending) and its generation id."""
    if getattr(consumer, "failed", False):
        return None
    state = str(_client_state(consumer))
    if state == STABLE:
        return not _rejoin_pending(consumer), consumer.generation_id
    if state == UNJOINED and not _rejoin_pending(consumer):
        return None
    return False, consumer.generation_id


def _rejoin_pending(consumer: Any) -> bool:
    """``rejoin_pending`` (Kafka's rejoinNeededOrPending: it also covers a finished join whose
    assignment the consumer has not applied yet) first; ``rejoin_needed`` for simpler fakes."""
    value = getattr(consumer, "rejoin_pending", None)
    if value is None:
        value = getattr(consumer, "rejoin_needed", None)
    return bool(value)  # is_stable asks it of every consumer of a touched group: no loop
