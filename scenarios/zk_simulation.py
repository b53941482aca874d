"""Design 1 run on the engine: a ZooKeeper ensemble and Kafka 0.8 consumers (seed 004).

``ZkSimulation`` drives the sans-I/O pieces (``coordinator.zookeeper.ZooKeeperEnsemble``,
``members.zk_consumer.ZkConsumer``) on ``scenarios.engine``'s clock and records their events in
one event log, as ``scenarios.simulation.Simulation`` does for the classic protocol:

* a fired watch is logged (``zk_watch_fired``) and reaches its client ``notify_latency_ms``
  later (the server pushes it on the session's connection);
* a consumer's rebalance waits for ZooKeeper round trips and back-offs: it is resumed by one
  engine timer per consumer at the time it yields;
* every consumer call returns what it produced (``ZkConsumerResult``): ``_apply`` records its
  events, delivers the watches its writes fired and sets its timer, as
  ``scenarios.simulation.Simulation._apply`` does for the classic consumer; ``_record`` is the
  one place events reach the log;
* the ensemble's followers and session expiries run by one timer at ``ensemble.next_due()``;
* every transaction the leader commits is logged (``zk_txn``) in zxid order.

The brokers' own znodes (``/brokers/topics/<topic>``, holding the partition map) are written by
an admin session that never expires. Same calls, same seed: the same log (nothing is random).
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from assignors.api import TopicPartition
from coordinator import events as ev
from coordinator.effects import CancelTimer, SetTimer
from coordinator.result import LoggedEvent
from coordinator.zookeeper import WatchedEvent, ZooKeeperEnsemble
from members.zk_consumer import (
    ZkConsumer,
    ZkConsumerConfig,
    ZkConsumerResult,
    registry_view,
    topic_data,
    topic_path,
    watch_fired_event,
)
from scenarios.engine import Engine
from scenarios.eventlog import EventLog

ZK = "@zookeeper"
ADMIN_TIMEOUT_MS = 1 << 62


class ZkSimulation:
    """One ZooKeeper ensemble, some 0.8 consumers, a clock and a log."""

    def __init__(
        self,
        *,
        topics: Mapping[str, int],
        servers: int = 3,
        lag_ms: Mapping[str, int] | None = None,
        notify_latency_ms: int = 1,
        brokers: int = 3,
    ) -> None:
        self.engine = Engine(timer_handler=self._on_timer)
        self.log = EventLog()
        self.zk = ZooKeeperEnsemble(servers, lag_ms)
        self.notify_latency_ms = notify_latency_ms
        self.brokers = brokers
        self.consumers: dict[str, ZkConsumer] = {}
        self.topic_sizes: dict[str, int] = {}
        self._logged_txns = 0
        self.cut: set[str] = set()  # consumers cut from their ZooKeeper server
        self._partition_until: int | None = None
        self._admin = self.zk.open_session("zk-0", ADMIN_TIMEOUT_MS)
        for path in ("/brokers", "/brokers/topics", "/consumers"):
            self._fired(self.zk.create(self._admin, path, "", 0)[1])
        for topic, count in topics.items():
            self.create_topic(topic, count)

    # -- the log ----------------------------------------------------------------------------

    @property
    def now(self) -> int:
        return self.engine.now

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.log.events

    def _log(self, event: str, node: str, **fields: Any) -> None:
        """One of the runner's own events (and the ensemble's, which has no node of its own)."""
        self._record(((event, {"t_ms": self.now, "node": node, **fields}),))

    def _record(self, events: Iterable[LoggedEvent]) -> None:
        """The one place events reach the log, in the order they happened."""
        log = self.log
        for name, fields in events:
            log.append(name, **fields)

    def _apply(self, cid: str, result: ZkConsumerResult) -> None:
        """What one consumer call returned: record its events, deliver the watches its writes
        fired, set or cancel its rebalance timer."""
        self._record(result.events)
        for watch in result.fired:
            self._schedule_delivery(watch)
        for effect in result.effects:
            if type(effect) is SetTimer:
                self.engine.set_timer(cid, effect.key, effect.deadline_ms)
            elif type(effect) is CancelTimer:
                self.engine.cancel_timer(cid, effect.key)
            else:
                raise TypeError(f"{cid} returned {effect!r}, which is not a timer effect")

    def _sync(self) -> None:
        """Log the leader's new commits and arm the ensemble's timer."""
        for txn in self.zk.log[self._logged_txns :]:
            if txn.op == "closeSession" and txn.data == "expired":
                self._log(ev.ZK_SESSION_EXPIRED, "zk-0", session_id=txn.session_id, server="zk-0")
            self._log(
                ev.ZK_TXN,
                "zk-0",
                server="zk-0",
                zxid=txn.zxid,
                op=txn.op,
                path=txn.path,
                data=txn.data,
                session_id=txn.session_id,
            )
        self._logged_txns = len(self.zk.log)
        due = self.zk.next_due()
        if due is None:
            self.engine.cancel_timer(ZK, "advance")
        else:
            self.engine.set_timer(ZK, "advance", due)

    def _fired(self, fired: list[WatchedEvent]) -> None:
        """Watches the runner's own writes or the ensemble fired: logged, then delivered."""
        for f in fired:
            self._record((watch_fired_event(f, self.now),))
            self._schedule_delivery(f)

    def _schedule_delivery(self, watch: WatchedEvent) -> None:
        self.engine.schedule(watch.t_ms + self.notify_latency_ms, self._deliver, watch)

    def _deliver(self, event: WatchedEvent) -> None:
        for cid, c in self.consumers.items():
            if c.session_id == event.session_id:
                self._apply(cid, c.notify(event, self.now))
        self._sync()

    def _on_timer(self, owner: str, key: Hashable) -> None:
        if owner == ZK:
            _, fired = self.zk.advance(self.now)
            self._sync()  # the expiries' txns first, then the watches they fired
            self._fired(fired)
        elif key == "rebalance":
            self._apply(owner, self.consumers[owner].resume(self.now))
        elif key == "autocommit":
            c = self.consumers[owner]
            if c.running:
                self._apply(owner, c.auto_commit(self.now))
                self.engine.set_timer(
                    owner, "autocommit", self.now + c.config.auto_commit_interval_ms
                )
        self._sync()

    # -- the actions --------------------------------------------------------------------------

    def add_consumer(self, cid: str, config: ZkConsumerConfig) -> ZkConsumer:
        if cid in self.consumers:
            raise ValueError(f"consumer {cid} exists already")
        c = ZkConsumer(config, self.zk, node=cid)
        self.consumers[cid] = c
        return c

    def start(self, cid: str) -> None:
        c = self.consumers[cid]
        if c.running:
            raise ValueError(f"consumer {cid} is running already")
        self._log(ev.SIM_CONSUMER_STARTED, cid)
        self._apply(cid, c.start(self.now))
        if c.config.auto_commit_enable:
            self.engine.set_timer(cid, "autocommit", self.now + c.config.auto_commit_interval_ms)
        self._sync()

    def close(self, cid: str, timeout_ms: int | None = None) -> None:
        """``shutdown()`` (the 0.8 consumer has no close timeout: ``timeout_ms`` is ignored)."""
        self._log(ev.SIM_CONSUMER_CLOSED, cid)
        self._apply(cid, self.consumers[cid].close(self.now))
        self.cut.discard(cid)
        self.engine.cancel_owner_timers(cid)
        self._sync()

    def crash(self, cid: str) -> None:
        self._log(ev.SIM_CONSUMER_CRASHED, cid)
        self._apply(cid, self.consumers[cid].crash(self.now))
        self.cut.discard(cid)
        self.engine.cancel_owner_timers(cid)
        self._sync()

    def restart(self, cid: str) -> None:
        """A new process: the running one dies (``crash``), a new connector starts."""
        c = self.consumers[cid]
        self._log(ev.SIM_CONSUMER_RESTARTED, cid)
        self.engine.cancel_owner_timers(cid)
        self.cut.discard(cid)
        self._apply(cid, c.restart(self.now))
        if c.config.auto_commit_enable:
            self.engine.set_timer(cid, "autocommit", self.now + c.config.auto_commit_interval_ms)
        self._sync()

    def commit(self, cid: str) -> None:
        """The application calls ``commitOffsets()``."""
        self._log(ev.SIM_CONSUMER_COMMIT, cid)
        self._apply(cid, self.consumers[cid].commit(self.now))
        self._sync()

    def partition_network(
        self, groups_of_nodes: list[list[str]], duration_ms: int | None = None
    ) -> None:
        """Split the network into islands (nodes not named share one more): a consumer whose
        ZooKeeper server is on another island is cut from it until the network heals. The
        connect string holds one server (``zookeeper.server``), so a cut client does not move
        to another one; ZooKeeper servers are never cut from each other (validation)."""
        groups = [sorted(g) for g in groups_of_nodes]
        until = None if duration_ms is None else self.now + duration_ms
        self._log(ev.SIM_NETWORK_PARTITIONED, "@cluster", groups=groups, until_ms=until)

        def island(node: str) -> int:
            return next((i for i, g in enumerate(groups) if node in g), -1)

        for cid, c in self.consumers.items():  # a new layout replaces the previous one
            if island(cid) != island(c.config.zookeeper_server):
                if cid not in self.cut:
                    self.cut.add(cid)
                    self._apply(cid, c.disconnect(self.now))
            elif cid in self.cut:
                self.cut.discard(cid)
                self._apply(cid, c.reconnect(self.now))
        self._partition_until = until
        if until is not None:
            self.engine.schedule(until, self._heal_if_due, until)
        self._sync()

    def _heal_if_due(self, until: int) -> None:
        if self._partition_until == until:
            self.heal_network()

    def heal_network(self) -> None:
        """The network is whole again: every cut consumer reconnects to its server."""
        self._partition_until = None
        self._log(ev.SIM_NETWORK_HEALED, "@cluster")
        for cid in sorted(self.cut):
            self._apply(cid, self.consumers[cid].reconnect(self.now))
        self.cut.clear()
        self._sync()

    def create_topic(self, topic: str, partitions: int) -> None:
        self.topic_sizes[topic] = partitions
        _, fired = self.zk.create(
            self._admin, topic_path(topic), topic_data(partitions, self.brokers), self.now
        )
        self._fired(fired)
        self._sync()

    def add_partitions(self, topic: str, total: int) -> None:
        """``kafka-topics --alter --partitions``: the topic znode's data changes."""
        self._log(ev.SIM_PARTITIONS_ADDED, "admin", topic=topic, partitions=total)
        self.topic_sizes[topic] = total
        _, fired = self.zk.set_data(
            self._admin, topic_path(topic), topic_data(total, self.brokers), self.now
        )
        self._fired(fired)
        self._sync()

    def run(self, until: int | None = None) -> int:
        return self.engine.run(until=until)

    # -- queries ----------------------------------------------------------------------------

    @property
    def cluster(self) -> ZkSimulation:
        """What the scenario actions ask of a cluster (``topics()``): the topics znodes."""
        return self

    def topics(self) -> dict[str, int]:
        """topic -> partition count, as the brokers' topic znodes say."""
        return dict(self.topic_sizes)

    def rebalances(self, group_id: str | None = None) -> list[dict[str, Any]]:
        """Every successful ``syncedRebalance`` try, per consumer, oldest first."""
        return [
            {
                "group_id": e["group_id"],
                "consumer": e["node"],
                "t_ms": e["t_ms"],
                "attempt": e["attempt"],
                "partitions": list(e["partitions"]),
            }
            for e in self.events
            if e["event"] == ev.ZK_REBALANCE_DONE and group_id in (None, e["group_id"])
        ]

    @property
    def violations(self) -> list[dict[str, Any]]:
        """The classic simulation's invariant checks do not apply to this design."""
        return []

    def owners(self, group: str, server: str = "zk-0") -> dict[str, str]:
        """partition ("t-p") -> owning thread id, from the owner znodes on ``server``."""
        return dict(registry_view(self.zk, server, group))

    def assignment(self, cid: str) -> list[TopicPartition]:
        """The partitions consumer ``cid`` is fetching."""
        return sorted(self.consumers[cid].owned)

    def fetching(self) -> dict[str, list[str]]:
        """partition -> the consumers fetching it (every partition of every topic)."""
        out: dict[str, list[str]] = {
            str(TopicPartition(t, p)): []
            for t, n in sorted(self.topic_sizes.items())
            for p in range(n)
        }
        for cid, c in self.consumers.items():
            if c.running:
                for tp in c.owned:
                    out.setdefault(str(tp), []).append(cid)
        return out

    def registry(self, group: str, server: str = "zk-0") -> list[str]:
        """The consumer ids under ``/consumers/<group>/ids`` on ``server``."""
        prefix = f"/consumers/{group}/ids/"
        return sorted(p[len(prefix) :] for p in self.zk.view(server) if p.startswith(prefix))

    def offsets(self, group: str) -> dict[str, int]:
        prefix = f"/consumers/{group}/offsets/"
        return {
            p[len(prefix) :].replace("/", "-"): json.loads(n.data)
            for p, n in sorted(self.zk.view("zk-0").items())
            if p.startswith(prefix) and p.count("/") == 5
        }
