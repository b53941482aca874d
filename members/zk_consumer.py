"""Kafka 0.8's high-level consumer (``kafka.consumer.ZookeeperConsumerConnector``), on the
simulated ZooKeeper: seed 004's design 1, where every consumer rebalances itself.

Read from Kafka 0.8.2.2 and from the parent of ``cc4dce94af8`` (KAFKA-2983, which removed it);
the rebalance is the same in both. What each part follows:

* **Identity**: ``consumerIdString`` is ``<group>_<consumer id>`` (``config.consumerId``, the
  tests' fixed id, instead of host-time-uuid), its threads ``<consumerIdString>-<n>`` for ``n <
  num.streams`` (``TopicCount.constructTopicCount``, ``ConsumerThreadId``).
* **Start** (``consume``): ``registerConsumerInZK`` writes the ephemeral
  ``/consumers/<group>/ids/<consumerIdString>`` with the subscription (``{"version":1,
  "subscription":{topic: num.streams},"pattern":"static"}``); ``reinitializeConsumer`` subscribes
  to the children of ``/consumers/<group>/ids`` and the data of ``/brokers/topics/<topic>``
  (``ZKRebalancerListener``, ``ZKTopicPartitionChangeListener``), then runs ``syncedRebalance``.
* **Watches** (I0Itec ZkClient under ``ZkUtils.subscribeChildChanges``/``subscribeDataChanges``):
  a notification re-reads the node with a new watch, then the listener calls
  ``rebalanceEventTriggered``: it sets ``isWatcherTriggered``, and the watcher executor thread
  runs ``syncedRebalance`` when the current one is over, so notifications during a rebalance fold
  into one more rebalance.
* **syncedRebalance**: up to ``rebalance.max.retries`` tries; after a failed try the fetchers
  stop and offsets are committed (``closeFetchersForQueues``), then it sleeps
  ``rebalance.backoff.ms``; after the last, ``ConsumerRebalanceFailedException``: the consumer
  stays registered, owning nothing.
* **rebalance** (one try): read its own registration; commit offsets and stop fetching
  (``closeFetchers``); delete its owner znodes (``releasePartitionOwnership``); read the registry
  (``AssignmentContext``: every consumer's subscription, the topics' partitions, from the
  consumer's *own* ZooKeeper server); assign with the legacy assignor
  (``PartitionAssignor.createInstance``: ``roundrobin``, anything else range); read the offsets
  of its partitions from ZooKeeper (``fetchOffsets``); create one ephemeral owner znode per
  partition (``reflectPartitionOwnershipDecision``: ``createEphemeralPathExpectConflict``, a
  node holding another thread's id is a conflict, every partition is tried, and on any conflict
  the ones it did create are deleted and the try fails). A ZooKeeper error while reading
  (a node gone between two reads) also fails the try ("exception during rebalance").
* **Offsets in ZooKeeper** (``offsets.storage=zookeeper``, the 0.8 default):
  ``/consumers/<group>/offsets/<topic>/<partition>``, written by ``commitOffsetToZooKeeper``
  only when the offset moved since the last checkpoint; auto-commit every
  ``auto.commit.interval.ms``; on ``shutdown`` a last commit, then the session closes (which
  deletes its ephemerals: registration and owners).
* **Session expiry** of a crashed consumer: ZooKeeper deletes its ephemerals and the others
  rebalance.
* **A live consumer cut from ZooKeeper** (``disconnect``/``reconnect``, a network cut): it stops
  pinging, so the leader expires its session ``zookeeper.session.timeout.ms`` later, deleting its
  registration and owner znodes; the others rebalance and take its partitions while its fetchers,
  which talk to the brokers, not to ZooKeeper, go on fetching them (two consumers read one
  partition). Its own ZooKeeper calls wait for the connection (ZkClient's
  ``retryUntilConnected``); notifications for it wait too (ZooKeeper re-fires them when the
  client reconnects its session, ``SetWatches``). Back in time, the session lives on. Too late,
  ZkClient opens a new session and calls ``ZKSessionExpireListener.handleNewSession``: the
  listener's ``resetState`` clears the topic registry (so the next ``closeFetchers`` commits
  nothing: the offsets read since the last commit are read again by the next owner),
  ``registerConsumerInZK`` writes the registration again, and ``syncedRebalance`` runs; the
  watches come back with the rebalance's reads (ZkClient's ``getChildren`` re-watches a path with
  listeners).
* **A restarted process** (``restart``) is a new connector: without ``consumer.id`` it generates
  a new id (``host-time-uuid``; groupsim names the n-th restart ``<id>-r<n>``), so while the old
  process's session has not expired the others see both ids and assign partitions to the dead
  one; they go unowned until the expiry's rebalance.

Simulation rules, not Kafka's: a partition is an endless log the application reads
``records_per_second`` records a second from while the fetcher runs; each ZooKeeper call is one
``rtt_ms`` round trip (a write's answer waits until the client's own server applied it); the
owner znodes are tried in (topic, partition) order (Scala iterated a ``HashMap``); the 0.8.2
round-robin assignor's identical-subscription rule applies (``assignors.legacy``). Brokers never
fail here, so ``/brokers/ids`` is not read.

Sans-I/O in the way of the simulation: the rebalance is a generator that yields the time it
wants to go on at (after a ZooKeeper round trip or a back-off); the runner resumes it then. It
yields its outputs too, as values: its events and the watches its writes fired (``Fired``).
Every entry point returns what the call produced (``ZkConsumerResult``, the shape of
``members.result.ConsumerResult``): the rebalance wake-up as ``SetTimer`` / ``CancelTimer``, the
events in the order they happened (``zk_watch_fired`` of its own writes among them) and the
fired watches for the runner to deliver. The consumer has no logger; nothing holds a call's
outputs between calls.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Iterator, Mapping
from typing import Any

from attrs import define, frozen

from assignors.api import Subscription, TopicPartition
from assignors.legacy import LegacyRangeAssignor, LegacyRoundRobinAssignor, thread_ids
from coordinator import events as ev
from coordinator.effects import CancelTimer, Effect, SetTimer
from coordinator.result import LoggedEvent
from coordinator.zookeeper import NodeExistsError, NoNodeError, WatchedEvent, ZkError
from coordinator.zookeeper.ensemble import WriteReply, ZooKeeperEnsemble

#: The runner's timer that resumes a consumer's rebalance.
REBALANCE_TIMER = "rebalance"


@frozen
class Fired:
    """Watches one of the consumer's ZooKeeper writes fired: the runner logs each
    (``zk_watch_fired``) and delivers it to its client."""

    watches: tuple[WatchedEvent, ...]


#: An output of a call, as the rebalance coroutine yields it: an event or fired watches.
Output = LoggedEvent | Fired
#: The rebalance coroutine: yields outputs, and the time it goes on at (an int) when it waits.
Steps = Generator[int | Output, None, Any]


def watch_fired_event(watch: WatchedEvent, now: int) -> LoggedEvent:
    """The ``zk_watch_fired`` event of a fired watch, logged by its server (the runner's own
    writes and the consumers' alike)."""
    return (
        ev.ZK_WATCH_FIRED,
        {
            "t_ms": now,
            "node": watch.server,
            "server": watch.server,
            "session_id": watch.session_id,
            "path": watch.path,
            "type": watch.type,
            "zxid": watch.zxid,
        },
    )


@frozen
class ZkConsumerResult:
    """What one call of a ``ZkConsumer`` produced, as a value."""

    #: The rebalance wake-up (``SetTimer`` / ``CancelTimer`` of ``REBALANCE_TIMER``).
    effects: tuple[Effect, ...] = ()
    #: Its events and the ``zk_watch_fired`` of its writes, in the order they happened.
    events: tuple[LoggedEvent, ...] = ()
    #: The watches its writes fired, for the runner to deliver to their clients.
    fired: tuple[WatchedEvent, ...] = ()


class ZkConsumerStep:
    """The outputs of one ``ZkConsumer`` call while it runs; created by the entry point and
    passed down (``step``)."""

    __slots__ = ("effects", "events", "fired", "now")

    def __init__(self, now: int) -> None:
        self.now = now
        self.effects: list[Effect] = []
        self.events: list[LoggedEvent] = []
        self.fired: list[WatchedEvent] = []

    def add(self, out: Output) -> None:
        if isinstance(out, Fired):
            self.fire(out.watches)
        else:
            self.events.append(out)

    def take(self, outs: Iterable[Output]) -> None:
        for out in outs:
            self.add(out)

    def fire(self, watches: Iterable[WatchedEvent]) -> None:
        for watch in watches:
            self.events.append(watch_fired_event(watch, self.now))
            self.fired.append(watch)

    def wake(self, at: int | None) -> None:
        """Resume the rebalance at ``at`` (None: nothing to resume)."""
        self.effects.append(
            CancelTimer(REBALANCE_TIMER) if at is None else SetTimer(REBALANCE_TIMER, at)
        )

    def result(self) -> ZkConsumerResult:
        return ZkConsumerResult(tuple(self.effects), tuple(self.events), tuple(self.fired))


"""A piece of the rebalance: yields the simulated times it waits for, returns its result."""


def ids_dir(group: str) -> str:
    """``ZKGroupDirs.consumerRegistryDir``."""
    return f"/consumers/{group}/ids"


def owner_path(group: str, tp: TopicPartition) -> str:
    """``ZkUtils.getConsumerPartitionOwnerPath``."""
    return f"/consumers/{group}/owners/{tp.topic}/{tp.partition}"


def offset_path(group: str, tp: TopicPartition) -> str:
    """``ZKGroupTopicDirs.consumerOffsetDir`` + partition."""
    return f"/consumers/{group}/offsets/{tp.topic}/{tp.partition}"


def topic_path(topic: str) -> str:
    """``ZkUtils.BrokerTopicsPath`` + topic: the topic's partition -> replicas map."""
    return f"/brokers/topics/{topic}"


def topic_data(partitions: int, brokers: int = 1) -> str:
    """The JSON a topic znode holds (``ZkUtils.replicaAssignmentZkData``), one replica each."""
    return json.dumps(
        {"version": 1, "partitions": {str(p): [p % max(1, brokers)] for p in range(partitions)}},
        sort_keys=True,
    )


@frozen
class ZkConsumerConfig:
    """The 0.8 consumer's settings (``kafka.consumer.ConsumerConfig``; defaults as there)."""

    group_id: str
    consumer_id: str
    topics: tuple[str, ...] = ()
    num_streams: int = 1  # the topicCountMap's value for every topic
    partition_assignment_strategy: str = "range"  # range | roundrobin
    rebalance_max_retries: int = 4  # MaxRebalanceRetries
    rebalance_backoff_ms: int = 2000  # defaults to zookeeper.sync.time.ms (ZKConfig: 2000)
    zookeeper_session_timeout_ms: int = 6000  # ZKConfig
    auto_commit_enable: bool = True
    auto_commit_interval_ms: int = 60_000
    zookeeper_server: str = "zk-0"  # which server of the connect string the client got
    rtt_ms: int = 1  # simulation: one ZooKeeper round trip
    records_per_second: int = 10  # simulation: how fast the application reads

    @property
    def consumer_id_string(self) -> str:
        return f"{self.group_id}_{self.consumer_id}"


@define
class ZkConsumerStats:
    """What the measures count (also derivable from the event log)."""

    notifications: int = 0
    attempts: int = 0
    conflicts: int = 0
    failed_attempts: int = 0
    failed_rebalances: int = 0
    rebalances: int = 0


class ZkConsumer:
    """One ``ZookeeperConsumerConnector`` with ``createMessageStreams(topics -> num.streams)``."""

    def __init__(
        self,
        config: ZkConsumerConfig,
        ensemble: ZooKeeperEnsemble,
        *,
        node: str | None = None,
    ) -> None:
        self.config = config
        self.zk = ensemble
        self.node = node or config.consumer_id
        self.session_id: int | None = None
        self.now = 0
        self.running = False
        self.incarnation = 0  # how many times the process was restarted
        self.connected = True  # to its ZooKeeper server (a network cut: ``disconnect``)
        self.blocked = False  # the rebalance waits for the connection (retryUntilConnected)
        self.held: list[WatchedEvent] = []  # notifications waiting for the connection
        self.triggered = False  # ZKRebalancerListener.isWatcherTriggered
        self.task: Steps | None = None
        self.wake_ms: int | None = None
        # topicRegistry: the partitions the fetchers run on, with the offset each started at
        self.owned: dict[TopicPartition, int] = {}
        self.owned_since: dict[TopicPartition, int] = {}
        self.checkpointed: dict[TopicPartition, int] = {}  # checkpointedZkOffsets
        self.stats = ZkConsumerStats()
        self.assignor = (
            LegacyRoundRobinAssignor(string_format="[t,p]", require_identical_subscriptions=True)
            if config.partition_assignment_strategy == "roundrobin"
            else LegacyRangeAssignor()
        )

    # -- the runner's entry points ------------------------------------------------------------

    @property
    def group(self) -> str:
        return self.config.group_id

    @property
    def consumer_id_string(self) -> str:
        """``consumerIdString``: the configured id for the first process, then one per restart
        (a restarted connector generates a new one)."""
        base = self.config.consumer_id_string
        return base if self.incarnation == 0 else f"{base}-r{self.incarnation}"

    def start(self, now: int) -> ZkConsumerResult:
        """``createMessageStreams``: register, subscribe, rebalance."""
        step = ZkConsumerStep(now)
        step.wake(self._start(step, now))
        return step.result()

    def resume(self, now: int) -> ZkConsumerResult:
        """Go on with the rebalance at its wake time (once connected: its next call waits)."""
        step = ZkConsumerStep(now)
        step.wake(self._resume(step, now))
        return step.result()

    def notify(self, event: WatchedEvent, now: int) -> ZkConsumerResult:
        """A watch notification: ZkClient re-arms the watch, the listener triggers a rebalance."""
        step = ZkConsumerStep(now)
        step.wake(self._notify(step, event, now))
        return step.result()

    def auto_commit(self, now: int) -> ZkConsumerResult:
        """The ``kafka-consumer-autocommit`` task."""
        step = ZkConsumerStep(now)
        if self.running and self.config.auto_commit_enable and self.connected:
            self.now = now
            step.take(self._commit_now())
        return step.result()

    def commit(self, now: int) -> ZkConsumerResult:
        """``ConsumerConnector.commitOffsets()``: the application commits (to ZooKeeper)."""
        step = ZkConsumerStep(now)
        if self.running and self.connected:
            self.now = now
            step.take(self._commit_now())
        return step.result()

    def restart(self, now: int) -> ZkConsumerResult:
        """A new process: a running one dies first (its session expires later), the new one
        is a new connector with a new consumer id, its own session and an empty offset cache."""
        step = ZkConsumerStep(now)
        self._crash(step, now)
        self.incarnation += 1
        self.checkpointed.clear()
        self.owned_since.clear()
        step.wake(self._start(step, now))
        return step.result()

    def disconnect(self, now: int) -> ZkConsumerResult:
        """The network to its ZooKeeper server is cut: no pings, the session's clock runs; the
        fetchers go on (they talk to the brokers)."""
        step = ZkConsumerStep(now)
        if self.running and self.connected:
            self.now = now
            self.connected = False
            step.add(
                self._event(
                    ev.ZK_CLIENT_DISCONNECTED, session_id=self.session_id, server=self.server
                )
            )
            self.zk.client_lost(self._sid, now)
        return step.result()

    def reconnect(self, now: int) -> ZkConsumerResult:
        """The network is back: the same session if it is still alive (held notifications
        are delivered, a waiting rebalance goes on), else ``handleNewSession``."""
        step = ZkConsumerStep(now)
        step.wake(self._reconnect(step, now))
        return step.result()

    def close(self, now: int) -> ZkConsumerResult:
        """``shutdown``: stop fetching, commit, close the session (its ephemerals go with it)."""
        step = ZkConsumerStep(now)
        if self.running:
            self.now = now
            step.add(self._event(ev.CONSUMER_CLOSING))
            if self.config.auto_commit_enable and self.connected:
                step.take(self._commit_now())
            self._stop(now)
            # cut off, the closeSession cannot reach ZooKeeper: the session expires instead
            if self.session_id is not None and self.zk.alive(self.session_id) and self.connected:
                step.fire(self.zk.close_session(self.session_id, now))
            step.add(self._event(ev.CONSUMER_CLOSED))
        return step.result()

    def crash(self, now: int) -> ZkConsumerResult:
        """The process dies: nothing is committed or deleted; the session expires later."""
        step = ZkConsumerStep(now)
        self._crash(step, now)
        return step.result()

    # -- the entry points' bodies: each takes the call's step ----------------------------------

    def _start(self, step: ZkConsumerStep, now: int) -> int | None:
        """``createMessageStreams``: register, subscribe, rebalance. Returns when to resume."""
        self.now = now
        self.running = True
        self.connected = True
        self.blocked = False
        self.held = []
        step.add(
            self._event(
                ev.CONSUMER_STARTED,
                incarnation=self.incarnation,
                topics=list(self.config.topics),
                pattern=None,
                rebalance_protocol="zookeeper",
            )
        )
        self.session_id = self.zk.open_session(
            self.config.zookeeper_server, self.config.zookeeper_session_timeout_ms
        )
        return self._run(step, self._consume(), now)

    def _resume(self, step: ZkConsumerStep, now: int) -> int | None:
        if not self.running or self.task is None or now != self.wake_ms:
            return self.wake_ms if self.running else None
        if not self.connected:
            self.blocked = True
            return None
        return self._step(step, now)

    def _notify(self, step: ZkConsumerStep, event: WatchedEvent, now: int) -> int | None:
        if not self.running or event.session_id != self.session_id:
            return self.wake_ms
        if not self.connected:  # re-fired when the session reconnects
            self.held.append(event)
            return self.wake_ms
        self.now = now
        self.stats.notifications += 1
        step.add(self._event(ev.ZK_WATCH_RECEIVED, path=event.path, type=event.type))
        try:  # ZkClient's re-subscription read (getChildren/exists with a new watch)
            if event.path == ids_dir(self.group):
                self.zk.get_children(self._sid, event.path, watch=True)
            else:
                self.zk.exists(self._sid, event.path, watch=True)
        except ZkError:
            pass
        self.triggered = True
        if self.task is None:
            return self._run(step, self._executor("watch " + event.path), now)
        return self.wake_ms

    def _reconnect(self, step: ZkConsumerStep, now: int) -> int | None:
        if not self.running or self.connected:
            return self.wake_ms if self.running else None
        self.now = now
        self.connected = True
        expired = not self.zk.alive(self._sid)
        step.add(
            self._event(
                ev.ZK_CLIENT_RECONNECTED,
                session_id=self.session_id,
                server=self.server,
                session_expired=expired,
            )
        )
        if expired:
            return self._handle_new_session(step, now)
        self.zk.client_heard(self._sid)
        held, self.held = self.held, []
        if self.blocked:
            self.blocked = False
            self._step(step, now)
        for event in held:
            self._notify(step, event, now)
        return self.wake_ms

    @property
    def server(self) -> str:
        return self.config.zookeeper_server

    def _handle_new_session(self, step: ZkConsumerStep, now: int) -> int | None:
        """``ZKSessionExpireListener.handleNewSession`` after ZkClient opened a new session:
        ``resetState`` (the topic registry is cleared: fetching stops, nothing is committed for
        it, and its owner znodes went with the old session), ``registerConsumerInZK``, then
        ``syncedRebalance``. A rebalance that was waiting for the old connection is dropped
        (simulation: in Kafka it would go on with the new session, then this one runs)."""
        old = self.session_id
        self.held = []
        self.blocked = False
        self.task = None
        self.wake_ms = None
        self.triggered = False
        self.session_id = self.zk.open_session(
            self.server, self.config.zookeeper_session_timeout_ms
        )
        dropped = sorted(self.owned)
        self.owned.clear()
        self.owned_since.clear()
        step.add(
            self._event(
                ev.ZK_NEW_SESSION,
                old_session_id=old,
                session_id=self.session_id,
                server=self.server,
                partitions=[str(tp) for tp in dropped],
            )
        )
        return self._run(step, self._new_session(), now)

    def _new_session(self) -> Steps:
        yield from self._register()
        # the rebalance's reads re-watch the paths with listeners (ZkClient.hasListeners)
        self.zk.get_children(self._sid, ids_dir(self.group), watch=True)
        for topic in self.config.topics:
            self.zk.exists(self._sid, topic_path(topic), watch=True)
        yield from self._synced_rebalance("new session")
        yield from self._executor_loop()

    def _crash(self, step: ZkConsumerStep, now: int) -> None:
        if not self.running:
            return
        self.now = now
        step.add(self._event(ev.CONSUMER_CRASHED, partitions=[str(tp) for tp in self.owned]))
        self._stop(now)
        if self.session_id is not None and self.zk.alive(self.session_id):
            self.zk.client_lost(self.session_id, now)

    def position(self, tp: TopicPartition, now: int) -> int:
        """How far the application has read ``tp`` (the simulation's endless-log model)."""
        start = self.owned[tp]
        since = self.owned_since[tp]
        return start + (now - since) * self.config.records_per_second // 1000

    # -- the coroutine machinery ----------------------------------------------------------------

    @property
    def _sid(self) -> int:
        assert self.session_id is not None
        return self.session_id

    def _run(self, step: ZkConsumerStep, task: Steps, now: int) -> int | None:
        self.task = task
        return self._step(step, now)

    def _step(self, step: ZkConsumerStep, now: int) -> int | None:
        """Run the rebalance until it waits: its outputs go to ``step``; when to resume."""
        self.now = now
        task = self.task
        assert task is not None
        try:
            while True:
                out = next(task)
                if isinstance(out, int):
                    self.wake_ms = out
                    return out
                step.add(out)
        except StopIteration:
            self.task = None
            self.wake_ms = None
            if self.running and self.triggered:
                return self._run(step, self._executor("watch"), now)
            return None

    def _stop(self, now: int) -> None:
        self.running = False
        self.task = None
        self.wake_ms = None
        self.owned.clear()

    def _event(self, event: str, **fields: Any) -> LoggedEvent:
        """One event of this consumer (coordinator.events names it), as a value."""
        return (event, {"t_ms": self.now, "node": self.node, "group_id": self.group, **fields})

    # -- ZooKeeper calls, one round trip each (ZkUtils) ------------------------------------------

    def _write(self, reply: tuple[WriteReply, list[WatchedEvent]]) -> Steps:
        answer, fired = reply
        if fired:
            yield Fired(tuple(fired))
        yield max(self.now + self.config.rtt_ms, answer.reply_ms)
        return answer

    def _read(self) -> Steps:
        yield self.now + self.config.rtt_ms

    def _ensure_path(self, path: str) -> Steps:
        """``ZkUtils.makeSurePersistentPathExists``: create the missing persistent parents."""
        parts = path.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            p = "/" + "/".join(parts[:i])
            if not self.zk.exists(self._sid, p):
                yield from self._write(self.zk.create(self._sid, p, "", self.now))

    def _create_ephemeral(self, path: str, data: str) -> Steps:
        """``createEphemeralPathExpectConflict``: create; on NodeExists, read the data, and it
        is a success only if the node already holds ours (a retried create after a lost link)."""
        answer = yield from self._write(
            self.zk.create(self._sid, path, data, self.now, ephemeral=True)
        )
        if isinstance(answer.error, NoNodeError):  # createParentPath, then again
            yield from self._ensure_path(path.rsplit("/", 1)[0])
            answer = yield from self._write(
                self.zk.create(self._sid, path, data, self.now, ephemeral=True)
            )
        if answer.error is None:
            return None
        if isinstance(answer.error, NodeExistsError):
            try:
                stored: str | None = self.zk.get_data(self._sid, path)
            except NoNodeError:
                stored = None
            yield from self._read()
            if stored == data:
                return None
            return stored if stored is not None else "(deleted meanwhile)"
        raise answer.error

    # -- consume and the listeners -----------------------------------------------------------

    def _registration(self) -> str:
        return json.dumps(
            {
                "pattern": "static",
                "subscription": {t: self.config.num_streams for t in self.config.topics},
                "timestamp": str(self.now),
                "version": 1,
            },
            sort_keys=True,
        )

    def _register(self) -> Steps:
        """``registerConsumerInZK``."""
        yield from self._ensure_path(ids_dir(self.group))
        path = f"{ids_dir(self.group)}/{self.consumer_id_string}"
        conflict = yield from self._create_ephemeral(path, self._registration())
        if conflict is not None:
            raise NodeExistsError(path)
        yield self._event(
            ev.ZK_CONSUMER_REGISTERED,
            consumer_id=self.consumer_id_string,
            session_id=self.session_id,
            server=self.config.zookeeper_server,
            topics=list(self.config.topics),
            num_streams=self.config.num_streams,
        )

    def _consume(self) -> Steps:
        """``consume`` then ``reinitializeConsumer``: register, watch, rebalance."""
        yield from self._register()
        self.zk.get_children(self._sid, ids_dir(self.group), watch=True)
        yield from self._read()
        for topic in self.config.topics:
            self.zk.exists(self._sid, topic_path(topic), watch=True)
            yield from self._read()
        yield from self._synced_rebalance("start")
        yield from self._executor_loop()

    def _executor(self, reason: str) -> Steps:
        """The watcher executor thread: one ``syncedRebalance`` per wake-up with the flag set."""
        yield from self._executor_loop()

    def _executor_loop(self) -> Steps:
        while self.running and self.triggered:
            self.triggered = False
            yield from self._synced_rebalance("watch")

    # -- syncedRebalance and rebalance ---------------------------------------------------------

    def _synced_rebalance(self, reason: str) -> Steps:
        cfg = self.config
        for attempt in range(cfg.rebalance_max_retries):
            if not self.running:
                return
            self.stats.attempts += 1
            yield self._event(
                ev.ZK_REBALANCE_ATTEMPT,
                consumer_id=self.consumer_id_string,
                attempt=attempt,
                reason=reason,
            )
            try:
                failure = yield from self._rebalance(attempt)
            except ZkError as exc:  # "exception during rebalance": another one will come
                failure = f"exception during rebalance: {exc}"
            if failure is None:
                self.stats.rebalances += 1
                return
            self.stats.failed_attempts += 1
            # closeFetchersForQueues (commit with auto-commit), then Thread.sleep(backoff)
            if cfg.auto_commit_enable:
                yield from self._commit_now()
            self.owned.clear()
            yield self._event(
                ev.ZK_REBALANCE_ATTEMPT_FAILED,
                attempt=attempt,
                reason=failure,
                backoff_ms=cfg.rebalance_backoff_ms,
            )
            yield self.now + cfg.rebalance_backoff_ms
        if self.running:
            self.stats.failed_rebalances += 1
            yield self._event(ev.ZK_REBALANCE_FAILED, retries=cfg.rebalance_max_retries)

    def _rebalance(self, attempt: int) -> Steps:
        """One try; returns None on success, else why it failed."""
        cfg, group, sid = self.config, self.group, self._sid
        me = self.consumer_id_string
        # TopicCount.constructTopicCount(group, consumerIdString, zkUtils): our registration
        self.zk.get_data(sid, f"{ids_dir(group)}/{me}")
        yield from self._read()
        # closeFetchers: stop fetching and commit (auto-commit) before letting go
        if cfg.auto_commit_enable:
            yield from self._commit_now()
        released = sorted(self.owned)
        for tp in released:  # releasePartitionOwnership: ZkUtils.deletePath ignores NoNode
            yield from self._write(self.zk.delete(sid, owner_path(group, tp), self.now))
        self.owned.clear()
        self.owned_since.clear()
        if released:
            yield self._event(ev.ZK_PARTITIONS_RELEASED, partitions=[str(tp) for tp in released])
        # AssignmentContext: the registry and the topics, as this consumer's server has them
        consumers = self.zk.get_children(sid, ids_dir(group))
        yield from self._read()
        subscriptions: dict[str, Subscription] = {}
        for cid in consumers:
            data = json.loads(self.zk.get_data(sid, f"{ids_dir(group)}/{cid}"))
            yield from self._read()
            topics = sorted(data["subscription"])
            streams = {data["subscription"][t] for t in topics}
            subscriptions[cid] = Subscription(topics, num_streams=max(streams, default=1))
        counts: dict[str, int] = {}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            if self.zk.exists(sid, topic_path(topic)):
                counts[topic] = len(
                    json.loads(self.zk.get_data(sid, topic_path(topic)))["partitions"]
                )
            yield from self._read()
        try:
            global_assignment = self.assignor.assign(counts, subscriptions)
        except ValueError as exc:
            return f"assignor: {exc}"
        mine = {
            tp: thread
            for thread in thread_ids(me, cfg.num_streams)
            for tp in global_assignment.get(thread, [])
        }
        yield self._event(
            ev.ZK_ASSIGNMENT_COMPUTED,
            attempt=attempt,
            consumers=list(consumers),
            partitions=[str(tp) for tp in sorted(mine)],
            assignment={t: [str(tp) for tp in tps] for t, tps in global_assignment.items() if tps},
        )
        # fetchOffsets: from ZooKeeper
        offsets: dict[TopicPartition, int] = {}
        for tp in sorted(mine):
            if self.zk.exists(sid, offset_path(group, tp)):
                offsets[tp] = int(self.zk.get_data(sid, offset_path(group, tp)))
            else:
                offsets[tp] = 0  # auto.offset.reset (simulation: the log starts at 0)
            yield from self._read()
        # reflectPartitionOwnershipDecision
        claimed: list[TopicPartition] = []
        conflicts = 0
        for tp in sorted(mine):
            holder = yield from self._create_ephemeral(owner_path(group, tp), mine[tp])
            if holder is None:
                claimed.append(tp)
            else:
                conflicts += 1
                self.stats.conflicts += 1
                yield self._event(
                    ev.ZK_OWNERSHIP_CONFLICT, attempt=attempt, partition=str(tp), owner=holder
                )
        if conflicts:
            for tp in claimed:
                yield from self._write(self.zk.delete(sid, owner_path(group, tp), self.now))
            return f"{conflicts} partition(s) still owned by another consumer"
        self.owned = dict(offsets)
        self.owned_since = {tp: self.now for tp in offsets}
        self.checkpointed.update(offsets)
        yield self._event(
            ev.ZK_REBALANCE_DONE, attempt=attempt, partitions=[str(tp) for tp in sorted(mine)]
        )
        return None

    # -- offsets ---------------------------------------------------------------------------------

    def _commit_now(self) -> Iterator[Output]:
        """``commitOffsets`` with ``offsets.storage=zookeeper``: ``updatePersistentPath`` for each
        partition whose offset moved since its checkpoint. Fire-and-forget in the simulation (the
        scheduler thread does not hold the rebalance lock)."""
        if self.session_id is None or not self.zk.alive(self.session_id):
            return
        written: dict[str, int] = {}
        for tp in sorted(self.owned):
            offset = self.position(tp, self.now)
            if self.checkpointed.get(tp) == offset:
                continue
            path = offset_path(self.group, tp)
            reply, fired = self.zk.set_data(self._sid, path, str(offset), self.now)
            if isinstance(reply.error, NoNodeError):  # createParentPath, then create
                parts = path.strip("/").split("/")
                for i in range(1, len(parts)):
                    parent = "/" + "/".join(parts[:i])
                    yield Fired(tuple(self.zk.create(self._sid, parent, "", self.now)[1]))
                reply, fired = self.zk.create(self._sid, path, str(offset), self.now)
            yield Fired(tuple(fired))
            self.checkpointed[tp] = offset
            written[str(tp)] = offset
        if written:
            yield self._event(ev.ZK_OFFSETS_COMMITTED, offsets=written)


def registry_view(ensemble: ZooKeeperEnsemble, server: str, group: str) -> Mapping[str, str]:
    """The owner znodes of ``group`` as ``server`` has them: partition -> thread id."""
    prefix = f"/consumers/{group}/owners/"
    return {
        p[len(prefix) :].replace("/", "-"): n.data
        for p, n in sorted(ensemble.view(server).items())
        if p.startswith(prefix) and p.count("/") == 5
    }
