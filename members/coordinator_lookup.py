"""Finding the group coordinator: AbstractCoordinator's ensureCoordinatorReady /
lookupCoordinator state, and the broker a lookup (or a metadata request) goes to, sans-I/O.

It knows the coordinator (or that it is unknown), the FindCoordinator in flight, the failed
attempts behind the exponential backoff, and the two steps ensureCoordinatorReady takes after a
failure: once the backoff is over, await a metadata update (``after_metadata``), and wait for it
(``awaits_metadata``) before the next lookup. Like ``members.metadata``, it sends nothing and
sets no timer: the ``Consumer`` sends the FindCoordinator request, sets the
``find-coordinator`` timer for the backoff and logs the events.

Kafka sends the lookup to ``leastLoadedNode``; the simulator takes the known brokers in id
order and moves to the next one after a failure (deterministic). The broker list starts as the
bootstrap list and follows each metadata answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from members.backoff import ExponentialBackoff


class CoordinatorLookup:
    """The coordinator and its discovery, for one consumer incarnation."""

    __slots__ = (
        "_backoff",
        "after_metadata",
        "attempts",
        "awaits_metadata",
        "coordinator",
        "in_flight",
        "known_nodes",
        "node_index",
    )

    def __init__(self, bootstrap: Sequence[str], backoff: ExponentialBackoff) -> None:
        #: retry.backoff.ms .. retry.backoff.max.ms (the consumer's seeded jitter).
        self._backoff = backoff
        #: The coordinator's node (``broker-<id>``), None while unknown.
        self.coordinator: str | None = None
        #: The FindCoordinator request in flight (its correlation id).
        self.in_flight: int | None = None
        #: Failed lookups in a row (the exponent of the backoff).
        self.attempts = 0
        #: After a failure: once the backoff is over, await a metadata update first.
        self.after_metadata = False
        #: That metadata refresh is under way: the next lookup waits for it.
        self.awaits_metadata = False
        #: The brokers a lookup or a metadata request may go to, in id order.
        self.known_nodes: list[str] = list(bootstrap)
        self.node_index = 0

    def pick_node(self) -> str:
        """The broker the next FindCoordinator or Metadata request goes to."""
        return self.known_nodes[self.node_index % len(self.known_nodes)]

    def rotate_node(self) -> None:
        """A request to the picked broker failed: the next one goes to the next broker."""
        self.node_index = (self.node_index + 1) % max(len(self.known_nodes), 1)

    def update_nodes(self, nodes: list[str]) -> None:
        """A metadata answer names the live brokers; keep the picked one if it is still there."""
        if not nodes:
            return
        current = self.pick_node()
        self.known_nodes = nodes
        self.node_index = nodes.index(current) if current in nodes else 0

    def found(self, coordinator: str) -> None:
        """A FindCoordinator answer named the coordinator: the failures are forgotten."""
        self.coordinator = coordinator
        self.attempts = 0
        self.after_metadata = False

    def failed(self) -> int:
        """A lookup failed (an error answer or a disconnect): ensureCoordinatorReady sleeps the
        returned backoff, then awaits a metadata update, then looks up again."""
        delay = self._backoff.backoff(self.attempts)
        self.attempts += 1
        self.after_metadata = True
        return delay

    def mark_unknown(self) -> str | None:
        """AbstractCoordinator.markCoordinatorUnknown: forget it; the old coordinator, if any."""
        old, self.coordinator = self.coordinator, None
        return old
