"""A minimal event loop for the members tests: Consumers <-> KafkaCluster on a virtual clock.

Not the project's runner (that lives in ``scenarios``): just enough to carry effects, with a fixed
1 ms network latency, cancellable timers and a stable tie-break, so the tests stay independent.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable

from coordinator.effects import CancelTimer, Send, SetTimer
from coordinator.result import CoordinatorResult
from members.result import ConsumerResult


class MiniLoop:
    def __init__(self, cluster, consumers: Iterable, latency_ms: int = 1) -> None:
        self.cluster = cluster
        self.consumers = {c.node: c for c in consumers}
        self.latency_ms = latency_ms
        self.now = 0
        self._heap: list = []
        self._seq = itertools.count()
        self._timers: dict[tuple[str, str], int] = {}  # (owner, key) -> live token
        self.down: set[str] = set()  # nodes whose traffic is dropped (consumer side)
        self.checks: list = []  # called after every event: check(loop)
        self.outstanding: dict[tuple[str, int], str] = {}  # (consumer, correlation id) -> broker

    def _push(self, at: int, item: tuple) -> None:
        heapq.heappush(self._heap, (at, next(self._seq), item))

    def apply(self, owner: str, effects) -> None:
        if isinstance(effects, (CoordinatorResult, ConsumerResult)):  # effects and events
            log = getattr(self, "log", None)  # a tests.members.harness.EventLog, when set
            for name, fields in effects.events if log is not None else ():
                log.events.append({**fields, "event": name})
            effects = effects.effects
        for eff in effects:
            if isinstance(eff, Send):
                if eff.src in self.consumers:
                    self.outstanding[(eff.src, eff.correlation_id)] = eff.dst
                self._push(self.now + self.latency_ms, ("msg", eff))
            elif isinstance(eff, SetTimer):
                token = next(self._seq)
                self._timers[(owner, eff.key)] = token
                self._push(max(eff.deadline_ms, self.now), ("timer", owner, eff.key, token))
            elif isinstance(eff, CancelTimer):
                self._timers.pop((owner, eff.key), None)

    def start(self, node: str) -> None:
        self.apply(node, self.consumers[node].start(self.now))

    def call(self, node: str, method: str, *args) -> None:
        self.apply(node, getattr(self.consumers[node], method)(*args, self.now))

    def run_until(self, t_ms: int) -> None:
        while self._heap and self._heap[0][0] <= t_ms:
            at, _, item = heapq.heappop(self._heap)
            self.now = at
            if item[0] == "timer":
                _, owner, key, token = item
                if self._timers.get((owner, key)) != token:
                    continue
                del self._timers[(owner, key)]
                if owner in self.consumers:
                    self.apply(owner, self.consumers[owner].handle_timer(key, at))
                else:
                    self.apply("cluster", self.cluster.handle_timer(key, at))
            else:
                msg: Send = item[1]
                if msg.dst in self.consumers:
                    if self.outstanding.pop((msg.dst, msg.correlation_id), None) is None:
                        continue  # the connection broke before this answer arrived
                    if msg.dst in self.down:
                        continue
                    self.apply(
                        msg.dst,
                        self.consumers[msg.dst].handle_response(
                            msg.src, msg.correlation_id, msg.message, at
                        ),
                    )
                else:
                    if msg.src in self.down:
                        continue
                    if not self.cluster.is_alive(msg.dst):
                        self.outstanding.pop((msg.src, msg.correlation_id), None)
                        self.apply(
                            msg.src,
                            self.consumers[msg.src].handle_disconnect(
                                msg.dst, msg.correlation_id, at
                            ),
                        )
                        continue
                    self.apply(
                        "cluster",
                        self.cluster.handle_request(
                            msg.dst, msg.src, msg.correlation_id, msg.message, at
                        ),
                    )
            for check in self.checks:
                check(self)
        self.now = t_ms

    def fail_broker(self, node: str) -> None:
        """The broker dies: its connections break, so every request still out to it fails."""
        self.cluster_call("fail_broker", node)
        for (src, corr), dst in sorted(self.outstanding.items()):
            if dst == node:
                del self.outstanding[(src, corr)]
                self.apply(src, self.consumers[src].handle_disconnect(dst, corr, self.now))

    def cluster_call(self, method: str, *args) -> None:
        self.apply("cluster", getattr(self.cluster, method)(*args, self.now))
