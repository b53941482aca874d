"""The simulated network between consumers and brokers: latency, jitter, loss and partitions.

Rules (all decisions draw from the one seeded ``random.Random`` the simulation hands in, in the
order messages are sent, so a run is reproducible from its seed):

* **Latency**: a message sent at ``t`` arrives at ``t + latency_ms + U{0..jitter_ms}``.
* **Order**: each directed link (src -> dst) is FIFO, like the TCP connection Kafka runs over: a
  message never overtakes an earlier one on the same link, jitter only delays it.
* **Loss**: with ``drop_probability`` a message vanishes. Nobody is told; the client's own request
  timeout is what notices (as a lost TCP segment that never gets through would look to Kafka).
  The request stays in flight on its connection: a broker failure still fails it.
* **Partitions**: ``partition([{a, b}, {c}], until_ms)`` splits the nodes into islands; nodes not
  named form one more island together. A message between islands, decided at send time, is lost
  silently by default; with ``partition_disconnect_ms`` set the request's client (its sender, or
  the addressee of a lost answer) instead learns of a disconnect that many ms later (a
  connection that times out). Messages already in flight when the
  partition starts still arrive.
* **Dead brokers** are not the network's business: the simulation refuses delivery to a dead
  broker and tells the sender it was disconnected (see ``scenarios.simulation``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from attrs import field, frozen, validators


@frozen
class NetworkConfig:
    """Network settings; the defaults are a quiet LAN (1 ms, no jitter, no loss)."""

    latency_ms: int = field(default=1, validator=validators.ge(0))
    jitter_ms: int = field(default=0, validator=validators.ge(0))
    drop_probability: float = field(default=0.0, validator=[validators.ge(0.0), validators.le(1.0)])
    partition_disconnect_ms: int | None = None
    """None: a message across a partition is lost silently; else the sender gets a disconnect."""
    disconnect_notice_ms: int | None = None
    """Delay before a sender learns its connection to a dead broker broke (default: latency)."""


class Network:
    """Computes when (and whether) each message arrives; holds no messages itself."""

    __slots__ = (
        "_config",
        "_fixed_delay",
        "_island",
        "_last_arrival",
        "_partition_until",
        "_track_constant",
        "rng",
        "stats",
    )

    def __init__(self, config: NetworkConfig, rng: random.Random) -> None:
        self._config = config
        self.rng = rng
        self._last_arrival: dict[tuple[str, str], int] = {}
        # With a constant latency a notice at least one latency later is behind everything sent
        # before it, so only a quicker notice needs the last arrival of each link remembered.
        notices = [self.disconnect_delay(), config.partition_disconnect_ms]
        self._track_constant = any(n is not None and n < config.latency_ms for n in notices)
        self._fixed_delay = self._fixed_delay_of(config)
        self._island: dict[str, int] = {}
        self._partition_until: int | None = None
        self.stats = {"sent": 0, "dropped": 0, "partitioned": 0}

    @property
    def config(self) -> NetworkConfig:
        return self._config

    @config.setter
    def config(self, config: NetworkConfig) -> None:
        """A new configuration (loss switched on or off mid-run) from the next message on."""
        self._config = config
        self._fixed_delay = self._fixed_delay_of(config)

    def _fixed_delay_of(self, config: NetworkConfig) -> int | None:
        """The quiet network (no loss, no jitter, no link to remember): every message takes the
        latency, so ``arrival`` only counts it (the runner asks it for every message)."""
        if config.drop_probability or config.jitter_ms or self._track_constant:
            return None
        return config.latency_ms

    # --- partitions -------------------------------------------------------------------------

    def partition(self, groups: Iterable[Iterable[str]], until_ms: int | None) -> None:
        """Split the network into islands until ``until_ms`` (None: until ``heal``)."""
        island: dict[str, int] = {}
        for number, group in enumerate(groups, start=1):
            for node in group:
                if node in island:
                    raise ValueError(f"node {node!r} is in two partition groups")
                island[node] = number
        self._island = island
        self._partition_until = until_ms

    def heal(self) -> None:
        self._island = {}
        self._partition_until = None

    @property
    def partitioned(self) -> bool:
        return bool(self._island)

    @property
    def partition_until(self) -> int | None:
        return self._partition_until

    def can_reach(self, src: str, dst: str) -> bool:
        island = self._island
        return not island or island.get(src, 0) == island.get(dst, 0)

    # --- delivery ---------------------------------------------------------------------------

    def arrival(self, src: str, dst: str, now: int) -> int | None:
        """When a message sent now from src to dst arrives, or None if it is lost."""
        stats = self.stats
        stats["sent"] += 1
        if self._island and not self.can_reach(src, dst):
            stats["partitioned"] += 1
            return None
        if self._fixed_delay is not None:
            return now + self._fixed_delay
        config = self._config
        if config.drop_probability and self.rng.random() < config.drop_probability:
            stats["dropped"] += 1
            return None
        at = now + config.latency_ms
        if not config.jitter_ms:
            # a constant delay keeps every link FIFO by itself (the engine breaks ties by
            # insertion order), so there is nothing to remember but for drained_at
            if self._track_constant:
                self._last_arrival[(src, dst)] = at
            return at
        at += self.rng.randint(0, config.jitter_ms)
        link = (src, dst)
        last = self._last_arrival.get(link)
        if last is not None and last > at:
            at = last
        self._last_arrival[link] = at
        return at

    def drained_at(self, src: str, dst: str, at: int) -> int:
        """``at``, or the arrival of the last message already sent from src to dst if later.

        A notice that a connection broke must not overtake what was sent on it before: TCP
        delivers the bytes before the reset, so Kafka's client handles those answers first.
        """
        last = self._last_arrival.get((src, dst))
        return last if last is not None and last > at else at

    def disconnect_delay(self) -> int:
        """How long a sender takes to notice a reset connection to a dead broker."""
        notice = self.config.disconnect_notice_ms
        return self.config.latency_ms if notice is None else notice
